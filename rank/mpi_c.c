//go:build !nompi

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include "mpi_c.h"

// Waiting. MPI libraries wait by polling: a rank blocked in a collective
// keeps a core busy until its partners arrive. gnnrun's pipeline has several
// threads per rank in exchanges on their own communicators (the sampler's
// workers, the feature gather, the scheduler), most of them waiting at any
// moment, and ranks may share cores; polling without end, they starve the
// threads with work (gnnrun loader, 2 ranks on 2 cores, scale 16, batches of
// 512: 52 batches/s per rank polling, 310-370 with naps, when this was first
// measured). So every collective is started nonblocking and completed by
// settle: it polls, giving the core up between polls (sched_yield: another
// thread or rank with work on the core runs, and with none the poll goes on
// at once), for spin_ns, then naps between polls, from 2 us doubling to 128
// us, so that a rank left waiting long (for a slow peer, a trainer, a rank
// writing files) leaves its core idle. Naps alone, after 250 us of plain
// polling, slowed the exchanges of ranks that meet every few milliseconds: a
// nap lasts far longer than asked (on the 2-core VM, 86 us for 2 us, 221 us
// for 128 us: the kernel's timer slack of 50 us, and the wake-up), and one
// that runs past the partner's arrival holds up both (bench/sample -worker,
// R-MAT 20, ranks asking each other over alltoall, rank 0's sampled edges/s,
// alternated runs: 2 ranks on 2 cores, 7.4-8.0 M napping against 7.8-10.6 M
// yielding, 6 pairs; 4 ranks, 3.1-3.3 M against 3.4-3.5 M, 3 pairs; gnnrun
// loader at 2 ranks, unchanged, 43-51 ms a batch against 39-46, 4 pairs).
// GNNRUN_MPI_SPIN_US sets the polling time; -1 polls without end
// (MPI_Waitall), for ranks with dedicated cores.
static long spin_ns = 10000000;
static int spin_only = 0;

static long now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int settle(int n, MPI_Request *req) {
	if (spin_only) return MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
	long start = now_ns(), nap = 2000;
	for (;;) {
		int done = 0;
		int rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
		if (rc != MPI_SUCCESS || done) return rc;
		if (now_ns() - start < spin_ns) {
			sched_yield();
			continue;
		}
		struct timespec t = {0, nap};
		nanosleep(&t, NULL);
		if (nap < 128000) nap *= 2;
	}
}

int gn_init(int *provided) {
	const char *spin = getenv("GNNRUN_MPI_SPIN_US");
	if (spin && *spin) {
		long us = atol(spin);
		spin_only = us < 0;
		spin_ns = us * 1000;
	}
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

int gn_finalize(void) { return MPI_Finalize(); }

int gn_state(int *initialized, int *finalized) {
	int rc = MPI_Initialized(initialized);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Finalized(finalized);
}

MPI_Fint gn_world(void) { return MPI_Comm_c2f(MPI_COMM_WORLD); }
int gn_comm_rank(MPI_Fint c, int *rank) { return MPI_Comm_rank(MPI_Comm_f2c(c), rank); }
int gn_comm_size(MPI_Fint c, int *size) { return MPI_Comm_size(MPI_Comm_f2c(c), size); }
int gn_processor_name(char *buf, int *len) { return MPI_Get_processor_name(buf, len); }
int gn_library_version(char *buf, int *len) { return MPI_Get_library_version(buf, len); }

void gn_error_string(int code, char *buf, int *len) {
	if (MPI_Error_string(code, buf, len) != MPI_SUCCESS) {
		*len = snprintf(buf, MPI_MAX_ERROR_STRING, "MPI error %d", code);
	}
}

// contiguous reports whether the non-empty buffers all lie within INT_MAX
// bytes above the lowest one, so one MPI_Alltoallv can address them by
// displacement; it returns that base and fills displs.
static int contiguous(int n, const uintptr_t *p, const int *count, uintptr_t *base, int *displs) {
	uintptr_t lo = 0;
	int any = 0;
	for (int i = 0; i < n; i++) {
		if (count[i] > 0 && (!any || p[i] < lo)) { lo = p[i]; any = 1; }
	}
	for (int i = 0; i < n; i++) {
		if (count[i] == 0) { displs[i] = 0; continue; }
		uintptr_t d = p[i] - lo;
		if (d > (uintptr_t)INT_MAX || d + (uintptr_t)count[i] > (uintptr_t)INT_MAX) return 0;
		displs[i] = (int)d;
	}
	*base = lo;
	return 1;
}

// gn_alltoallv posts every receive and send of an alltoallv as
// point-to-point messages, never as MPI_Ialltoallv. OpenMPI 4.1's
// nonblocking collectives (coll/libnbc) hang when several threads of a
// process progress them at once, each on its own communicator, as the
// loader's sample workers and gather do: gnnrun loader, R-MAT 22, 4 ranks
// on 2 cores, 2 sample workers, hung in the pipeline's first minute in 2
// runs of 2, every sample worker of every rank polling an
// MPI_Ialltoallv; with point-to-point messages, 6 runs of 6 finished. The
// messages also need no common base, so buffers may lie anywhere.
int gn_alltoallv(MPI_Fint c, int n, const uintptr_t *sp, const int *sc, const uintptr_t *rp, const int *rc) {
	MPI_Comm comm = MPI_Comm_f2c(c);
	int me, err;
	if ((err = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS) return err;
	MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
	if (!req) return MPI_ERR_NO_MEM;
	int k = 0;
	for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
		int src = (me - i + n) % n;
		err = MPI_Irecv((void *)rp[src], rc[src], MPI_BYTE, src, 7001, comm, &req[k++]);
	}
	for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
		int dst = (me + i) % n;
		err = MPI_Isend((void *)sp[dst], sc[dst], MPI_BYTE, dst, 7001, comm, &req[k++]);
	}
	if (err == MPI_SUCCESS) err = settle(k, req);
	free(req);
	return err;
}

// gn_alltoallv_plain is one blocking MPI_Alltoallv of buffers within
// INT_MAX bytes of each other, from one thread: the peer bench/alltoall
// measures the exchanges against.
int gn_alltoallv_plain(MPI_Fint c, int n, const uintptr_t *sp, const int *sc, const uintptr_t *rp, const int *rc) {
	int *sd = malloc(sizeof(int) * 2 * (size_t)n);
	if (!sd) return MPI_ERR_NO_MEM;
	int *rd = sd + n;
	uintptr_t sbase, rbase;
	int err = MPI_ERR_BUFFER;
	if (contiguous(n, sp, sc, &sbase, sd) && contiguous(n, rp, rc, &rbase, rd)) {
		err = MPI_Alltoallv((void *)sbase, sc, sd, MPI_BYTE, (void *)rbase, rc, rd, MPI_BYTE, MPI_Comm_f2c(c));
	}
	free(sd);
	return err;
}

int gn_allgatherv(MPI_Fint c, int n, uintptr_t sp, int sc, const uintptr_t *rp, const int *rc) {
	MPI_Comm comm = MPI_Comm_f2c(c);
	int *rd = malloc(sizeof(int) * (size_t)n);
	if (!rd) return MPI_ERR_NO_MEM;
	uintptr_t rbase;
	int err;
	if (contiguous(n, rp, rc, &rbase, rd)) {
		MPI_Request req;
		err = MPI_Iallgatherv((void *)sp, sc, MPI_BYTE, (void *)rbase, rc, rd, MPI_BYTE, comm, &req);
		if (err == MPI_SUCCESS) err = settle(1, &req);
	} else {
		// Scattered receive buffers: one broadcast per contributor.
		int me;
		err = MPI_Comm_rank(comm, &me);
		for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
			void *buf = (void *)(i == me ? sp : rp[i]);
			err = gn_bcast(c, buf, rc[i], i);
			if (err == MPI_SUCCESS && i == me && rc[i] > 0 && rp[i] != sp) memcpy((void *)rp[i], (void *)sp, (size_t)rc[i]);
		}
	}
	free(rd);
	return err;
}

int gn_allreduce(MPI_Fint c, int isfloat, uintptr_t in, uintptr_t out, int n, int op) {
	MPI_Op mop = op == 0 ? MPI_SUM : op == 1 ? MPI_MIN : MPI_MAX;
	MPI_Datatype t = isfloat ? MPI_DOUBLE : MPI_INT64_T;
	MPI_Request req;
	int err = MPI_Iallreduce(in == out ? MPI_IN_PLACE : (void *)in, (void *)out, n, t, mop, MPI_Comm_f2c(c), &req);
	return err == MPI_SUCCESS ? settle(1, &req) : err;
}

int gn_bcast(MPI_Fint c, void *buf, int n, int root) {
	MPI_Request req;
	int err = MPI_Ibcast(buf, n, MPI_BYTE, root, MPI_Comm_f2c(c), &req);
	return err == MPI_SUCCESS ? settle(1, &req) : err;
}

int gn_barrier(MPI_Fint c) {
	MPI_Request req;
	int err = MPI_Ibarrier(MPI_Comm_f2c(c), &req);
	return err == MPI_SUCCESS ? settle(1, &req) : err;
}

int gn_split(MPI_Fint c, int color, int key, MPI_Fint *out) {
	MPI_Comm nc;
	int err = MPI_Comm_split(MPI_Comm_f2c(c), color, key, &nc);
	if (err == MPI_SUCCESS) *out = MPI_Comm_c2f(nc);
	return err;
}

int gn_dup(MPI_Fint c, MPI_Fint *out) {
	MPI_Comm nc;
	int err = MPI_Comm_dup(MPI_Comm_f2c(c), &nc);
	if (err == MPI_SUCCESS) *out = MPI_Comm_c2f(nc);
	return err;
}

int gn_split_shared(MPI_Fint c, MPI_Fint *out) {
	MPI_Comm nc;
	int me, err;
	if ((err = MPI_Comm_rank(MPI_Comm_f2c(c), &me)) != MPI_SUCCESS) return err;
	err = MPI_Comm_split_type(MPI_Comm_f2c(c), MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &nc);
	if (err == MPI_SUCCESS) *out = MPI_Comm_c2f(nc);
	return err;
}

int gn_comm_free(MPI_Fint c) {
	MPI_Comm comm = MPI_Comm_f2c(c);
	return MPI_Comm_free(&comm);
}

void gn_abort(MPI_Fint c, int code) { MPI_Abort(MPI_Comm_f2c(c), code); }

int gn_win_create(MPI_Fint c, void *base, int64_t size, MPI_Fint *win) {
	MPI_Win w;
	int err = MPI_Win_create(base, (MPI_Aint)size, 1, MPI_INFO_NULL, MPI_Comm_f2c(c), &w);
	if (err != MPI_SUCCESS) return err;
	*win = MPI_Win_c2f(w);
	return MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
}

int gn_win_lock_all(MPI_Fint w) { return MPI_Win_lock_all(MPI_MODE_NOCHECK, MPI_Win_f2c(w)); }
int gn_win_unlock_all(MPI_Fint w) { return MPI_Win_unlock_all(MPI_Win_f2c(w)); }
int gn_win_flush(MPI_Fint w, int target) { return MPI_Win_flush(target, MPI_Win_f2c(w)); }
int gn_win_flush_all(MPI_Fint w) { return MPI_Win_flush_all(MPI_Win_f2c(w)); }

int gn_win_get(MPI_Fint w, void *dst, int n, int target, int64_t offset) {
	return MPI_Get(dst, n, MPI_BYTE, target, (MPI_Aint)offset, n, MPI_BYTE, MPI_Win_f2c(w));
}

// hindexed builds a datatype of count blocks of size bytes at the byte
// displacements off.
static int hindexed(int count, int size, const int64_t *off, MPI_Datatype *t) {
	MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)count);
	if (!d) return MPI_ERR_NO_MEM;
	for (int i = 0; i < count; i++) d[i] = (MPI_Aint)off[i];
	int err = MPI_Type_create_hindexed_block(count, size, d, MPI_BYTE, t);
	free(d);
	if (err == MPI_SUCCESS) err = MPI_Type_commit(t);
	return err;
}

// getTyped reads into mem what from selects in target's window, laid out
// as to selects in mem, and frees both datatypes (freeing a datatype in use
// by a pending operation is allowed: the operation completes with it).
static int getTyped(MPI_Fint w, uintptr_t mem, int target, MPI_Datatype to, MPI_Datatype from) {
	int err = MPI_Get((void *)mem, 1, to, target, 0, 1, from, MPI_Win_f2c(w));
	MPI_Type_free(&to);
	MPI_Type_free(&from);
	return err;
}

int gn_win_get_blocks(MPI_Fint w, uintptr_t mem, const int64_t *dst, int target, const int64_t *src, int count, int size) {
	MPI_Datatype to, from;
	int err = hindexed(count, size, dst, &to);
	if (err != MPI_SUCCESS) return err;
	if ((err = hindexed(count, size, src, &from)) != MPI_SUCCESS) {
		MPI_Type_free(&to);
		return err;
	}
	return getTyped(w, mem, target, to, from);
}

// hindexedLens is hindexed with a length of its own for every block.
static int hindexedLens(int count, const int *lens, const int64_t *off, MPI_Datatype *t) {
	MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)count);
	if (!d) return MPI_ERR_NO_MEM;
	for (int i = 0; i < count; i++) d[i] = (MPI_Aint)off[i];
	int err = MPI_Type_create_hindexed(count, lens, d, MPI_BYTE, t);
	free(d);
	if (err == MPI_SUCCESS) err = MPI_Type_commit(t);
	return err;
}

int gn_win_get_ranges(MPI_Fint w, uintptr_t mem, const int64_t *dst, int target, const int64_t *src, const int *lens, int count) {
	MPI_Datatype to, from;
	int err = hindexedLens(count, lens, dst, &to);
	if (err != MPI_SUCCESS) return err;
	if ((err = hindexedLens(count, lens, src, &from)) != MPI_SUCCESS) {
		MPI_Type_free(&to);
		return err;
	}
	return getTyped(w, mem, target, to, from);
}

int gn_win_free(MPI_Fint w) {
	MPI_Win win = MPI_Win_f2c(w);
	return MPI_Win_free(&win);
}
