//go:build !nompi && !cgo

package rank

// The MPI build reaches MPI through cgo. Without cgo (CGO_ENABLED=0, or no C
// compiler, which turns cgo off by default) mpi.go drops out of the build;
// this undefined name makes the compiler say why instead of listing every
// missing function. A machine without MPI or a C compiler wants the build
// without MPI: go build -tags nompi, or make build-nompi.
var _ = cgo_is_off_so_there_is_no_MPI_build_with_tags_nompi_for_a_world_of_one
