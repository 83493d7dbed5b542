//go:build cgo && linux

package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// kernelSources are the CUDA C kernels, compiled by NVRTC for the device's
// architecture at first use and cached on disk.
//
//go:embed kernels/*.cu
var kernelSources embed.FS

// NVRTC, loaded at run time like the driver (it comes with the CUDA
// toolkit and with PyTorch's CUDA wheels: libnvrtc.so.<major>).
type nvrtcAPI struct {
	create     func(prog *uintptr, src, name string, nHeaders int32, headers, names unsafe.Pointer) int32
	compile    func(prog uintptr, nOptions int32, options unsafe.Pointer) int32
	ptxSize    func(prog uintptr, n *uint64) int32
	ptx        func(prog uintptr, out *byte) int32
	logSize    func(prog uintptr, n *uint64) int32
	log        func(prog uintptr, out *byte) int32
	destroy    func(prog *uintptr) int32
	errorName  func(rc int32) string
	loadedFrom string
}

var (
	nvrtcOnce sync.Once
	nvrtc     *nvrtcAPI
	nvrtcErr  error
)

var nvrtcNames = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}

func loadNVRTC() (*nvrtcAPI, error) {
	nvrtcOnce.Do(func() {
		var h uintptr
		var first error
		n := &nvrtcAPI{}
		for _, name := range nvrtcNames {
			var err error
			if h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
				n.loadedFrom = name
				break
			}
			if first == nil {
				first = err
			}
		}
		if h == 0 {
			nvrtcErr = fmt.Errorf("cuda: NVRTC, which compiles gnnrun's kernels, is not on this host (%v): install the CUDA toolkit's libnvrtc or put its directory on LD_LIBRARY_PATH", first)
			return
		}
		defer func() {
			if p := recover(); p != nil {
				nvrtcErr = fmt.Errorf("cuda: %s: %v", n.loadedFrom, p)
			}
		}()
		purego.RegisterLibFunc(&n.create, h, "nvrtcCreateProgram")
		purego.RegisterLibFunc(&n.compile, h, "nvrtcCompileProgram")
		purego.RegisterLibFunc(&n.ptxSize, h, "nvrtcGetPTXSize")
		purego.RegisterLibFunc(&n.ptx, h, "nvrtcGetPTX")
		purego.RegisterLibFunc(&n.logSize, h, "nvrtcGetProgramLogSize")
		purego.RegisterLibFunc(&n.log, h, "nvrtcGetProgramLog")
		purego.RegisterLibFunc(&n.destroy, h, "nvrtcDestroyProgram")
		purego.RegisterLibFunc(&n.errorName, h, "nvrtcGetErrorString")
		nvrtc = n
	})
	return nvrtc, nvrtcErr
}

// kernelPTX returns the PTX of the named kernel source for compute
// capability major.minor: from the disk cache (keyed by the source's hash
// and the architecture) or compiled now and cached.
func kernelPTX(file string, major, minor int) ([]byte, error) {
	src, err := kernelSources.ReadFile("kernels/" + file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	arch := fmt.Sprintf("compute_%d%d", major, minor)
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "gnnrun", "kernels", fmt.Sprintf("%s-%s-%s.ptx", strings.TrimSuffix(file, ".cu"), hex.EncodeToString(sum[:8]), arch))
		if ptx, err := os.ReadFile(cache); err == nil {
			return ptx, nil
		}
	}
	ptx, err := compilePTX(string(src), file, arch)
	if err != nil {
		return nil, err
	}
	if cache != "" && os.MkdirAll(filepath.Dir(cache), 0o755) == nil {
		tmp := cache + fmt.Sprintf(".%d.tmp", os.Getpid())
		if os.WriteFile(tmp, ptx, 0o644) == nil {
			os.Rename(tmp, cache) // a cache: a failure only costs a compile next time
		}
	}
	return ptx, nil
}

// compilePTX compiles CUDA C to NUL-terminated PTX for arch.
func compilePTX(src, name, arch string) ([]byte, error) {
	n, err := loadNVRTC()
	if err != nil {
		return nil, err
	}
	var prog uintptr
	if rc := n.create(&prog, src, name, 0, nil, nil); rc != 0 {
		return nil, fmt.Errorf("cuda: nvrtcCreateProgram: %s", n.errorName(rc))
	}
	defer n.destroy(&prog)
	opts := []string{"--gpu-arch=" + arch, "-default-device", "--std=c++14"}
	cstrs := make([]*byte, len(opts))
	keep := make([][]byte, len(opts))
	for i, o := range opts {
		keep[i] = append([]byte(o), 0)
		cstrs[i] = &keep[i][0]
	}
	var pin runtime.Pinner
	for _, k := range keep {
		pin.Pin(&k[0])
	}
	pin.Pin(&cstrs[0])
	rc := n.compile(prog, int32(len(opts)), unsafe.Pointer(&cstrs[0]))
	pin.Unpin()
	if rc != 0 {
		var size uint64
		n.logSize(prog, &size)
		log := make([]byte, size+1)
		n.log(prog, &log[0])
		return nil, fmt.Errorf("cuda: compiling %s for %s (%s): %s\n%s", name, arch, n.loadedFrom, n.errorName(rc), strings.TrimRight(string(log), "\x00\n"))
	}
	var size uint64
	if rc := n.ptxSize(prog, &size); rc != 0 {
		return nil, fmt.Errorf("cuda: nvrtcGetPTXSize: %s", n.errorName(rc))
	}
	ptx := make([]byte, size)
	if rc := n.ptx(prog, &ptx[0]); rc != 0 {
		return nil, fmt.Errorf("cuda: nvrtcGetPTX: %s", n.errorName(rc))
	}
	return ptx, nil
}
