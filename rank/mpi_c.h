// C side of package rank's MPI layer. Every handle crosses into Go as a
// Fortran integer (MPI_Fint), which is an int in every MPI library, so the
// Go code never sees OpenMPI's pointer handles or MPICH's int handles.
#ifndef GNNRUN_RANK_MPI_C_H
#define GNNRUN_RANK_MPI_C_H
#include <stdint.h>
#include <mpi.h>

int gn_init(int *provided);
int gn_finalize(void);
int gn_state(int *initialized, int *finalized);
MPI_Fint gn_world(void);
int gn_comm_rank(MPI_Fint c, int *rank);
int gn_comm_size(MPI_Fint c, int *size);
int gn_processor_name(char *buf, int *len);
int gn_library_version(char *buf, int *len);
void gn_error_string(int code, char *buf, int *len);

int gn_alltoallv(MPI_Fint c, int n, const uintptr_t *sp, const int *sc, const uintptr_t *rp, const int *rc);
int gn_alltoallv_plain(MPI_Fint c, int n, const uintptr_t *sp, const int *sc, const uintptr_t *rp, const int *rc);
int gn_allgatherv(MPI_Fint c, int n, uintptr_t sp, int sc, const uintptr_t *rp, const int *rc);
int gn_allreduce(MPI_Fint c, int isfloat, uintptr_t in, uintptr_t out, int n, int op);
int gn_bcast(MPI_Fint c, void *buf, int n, int root);
int gn_barrier(MPI_Fint c);
int gn_split(MPI_Fint c, int color, int key, MPI_Fint *out);
int gn_dup(MPI_Fint c, MPI_Fint *out);
int gn_split_shared(MPI_Fint c, MPI_Fint *out);
int gn_comm_free(MPI_Fint c);
void gn_abort(MPI_Fint c, int code);

int gn_win_create(MPI_Fint c, void *base, int64_t size, MPI_Fint *win);
int gn_win_lock_all(MPI_Fint w);
int gn_win_unlock_all(MPI_Fint w);
int gn_win_flush(MPI_Fint w, int target);
int gn_win_flush_all(MPI_Fint w);
int gn_win_get(MPI_Fint w, void *dst, int n, int target, int64_t offset);
int gn_win_get_blocks(MPI_Fint w, uintptr_t mem, const int64_t *dst, int target, const int64_t *src, int count, int size);
int gn_win_get_ranges(MPI_Fint w, uintptr_t mem, const int64_t *dst, int target, const int64_t *src, const int *lens, int count);
int gn_win_free(MPI_Fint w);
#endif
