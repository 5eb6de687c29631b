/* tfn's all-reduce through shared memory, for the replicas of a job that all run on one machine
   (runtime/shared_allreduce.py sets it up; frontend/distribute/strategy.py turns it on).

   Each replica has a segment of an MPI-3 shared window (MPI_Win_allocate_shared over the job's node communicator,
   allocated by mpi4py): the other replicas map it too. Its first CONTROL_BYTES are the replica's control block;
   the rest is an arena from which tfn_shared_malloc serves the buffers that compiled code all-reduces in place
   (passes/tfn_cache_large_buffers.py routes the malloc of such a buffer, a gradient, to it). When every replica's
   buffer of an all-reduce lies in its arena, tfn_shared_allreduce sums it without copying it anywhere: replica r
   adds up chunk r of the buffers of all replicas (in rank order: every replica gets the same bits) and writes the
   sum into every replica's buffer. Each element is read from each replica and written to each once; MPICH's
   single-copy algorithm for 2 ranks (reduce-scatter then all-gather through process_vm_readv) copies the halves
   into a temporary buffer and back, about twice the memory traffic.

   The call (from the helper tfn-lower-mpi defines, when the module global tfn_shm_allreduce_hook is set):
     1. publish (offset of the buffer in the arena or -1, elements, kind) in the control block, then a barrier;
     2. if every replica published an arena buffer of the same elements and kind: reduce this replica's chunk,
        a barrier, return 0; otherwise return 1 on every replica (all read the same records), and the helper
        calls MPI_Allreduce instead.
   Records alternate between two slots by call parity: a replica writes call n+2's record only after every replica
   reached call n+1's first barrier, i.e. after it read call n's records.

   Barriers spin on the replicas' arrival counters (as MPICH's shared-memory waits do), yielding the core after a
   while; a replica whose process is gone (kill(pid, 0) fails with ESRCH) is noticed within about a second and the
   job is aborted with MPI_Abort (its address and the communicator's handle are given at setup), with a message.

   The arena: first fit over a free list of page-aligned ranges, coalesced on free; one mutex. tfn_free (in
   _buffer_cache.c) hands arena blocks to tfn_shared_free. When the arena is full (or not set up) tfn_shared_malloc
   returns tfn_malloc's block, which the all-reduce then sees as "not in the arena" (MPI path). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_REPLICAS 64
#define CONTROL_BYTES 4096
#define PAGE 4096
#define MAX_RANGES 1024

void *tfn_malloc(size_t n); /* _buffer_cache.c */

typedef struct {
  int64_t offset, count, kind, pad[5]; /* one cache line */
} Record;

typedef struct {
  volatile int64_t arrived; /* barriers passed */
  int64_t pad[7];
  Record record[2];
} Control;

typedef struct {
  size_t start, bytes;
} Range;

static int rank_ = -1, size_;
static char *segment[MAX_REPLICAS]; /* each replica's segment, mapped here */
static size_t segment_bytes;
static pid_t pid_of[MAX_REPLICAS];
static int64_t calls, arrived, summed; /* all-reduces: all, barriers passed, done here */
static int64_t spent_ns[3]; /* in the first barrier, summing, in the second barrier (the calls done here) */
static int (*abort_fn)(int64_t, int);
static int64_t comm_handle;

static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static Range free_ranges[MAX_RANGES], used[MAX_RANGES];
static int n_free, n_used;

static Control *control(int r) { return (Control *)segment[r]; }

/* The replica's segments (addresses in this process), its rank, the replicas' process ids, and MPI_Abort with the
   communicator to abort. Returns 0, or -1 for arguments it cannot use (then nothing is set up). */
EXPORT int tfn_shared_setup(int rank, int size, char **segments, size_t bytes, const int64_t *pids,
                            void *mpi_abort, int64_t comm) {
  if (size < 2 || size > MAX_REPLICAS || rank < 0 || rank >= size || bytes <= CONTROL_BYTES + PAGE) return -1;
  for (int r = 0; r < size; r++) {
    segment[r] = segments[r];
    pid_of[r] = (pid_t)pids[r];
  }
  segment_bytes = bytes;
  abort_fn = (int (*)(int64_t, int))mpi_abort;
  comm_handle = comm;
  memset(control(rank), 0, sizeof(Control));
  pthread_mutex_lock(&arena_lock);
  n_free = 1;
  free_ranges[0] = (Range){CONTROL_BYTES, (bytes - CONTROL_BYTES) / PAGE * PAGE};
  n_used = 0;
  pthread_mutex_unlock(&arena_lock);
  size_ = size;
  __atomic_store_n(&rank_, rank, __ATOMIC_RELEASE);
  return 0;
}

static int in_arena(const void *p) {
  return rank_ >= 0 && (const char *)p >= segment[rank_] + CONTROL_BYTES &&
         (const char *)p < segment[rank_] + segment_bytes;
}

EXPORT int tfn_shared_owns(const void *p) { return in_arena(p); }

EXPORT void *tfn_shared_malloc(size_t n) {
  if (__atomic_load_n(&rank_, __ATOMIC_ACQUIRE) < 0 || n == 0) return tfn_malloc(n);
  size_t bytes = (n + PAGE - 1) / PAGE * PAGE;
  void *p = NULL;
  pthread_mutex_lock(&arena_lock);
  for (int i = 0; i < n_free && n_used < MAX_RANGES; i++) {
    if (free_ranges[i].bytes < bytes) continue;
    used[n_used++] = (Range){free_ranges[i].start, bytes};
    p = segment[rank_] + free_ranges[i].start;
    free_ranges[i].start += bytes;
    free_ranges[i].bytes -= bytes;
    if (free_ranges[i].bytes == 0) {
      memmove(free_ranges + i, free_ranges + i + 1, (size_t)(n_free - i - 1) * sizeof(Range));
      n_free--;
    }
    break;
  }
  pthread_mutex_unlock(&arena_lock);
  return p ? p : tfn_malloc(n);
}

/* Give an arena block back (the caller checked tfn_shared_owns). */
EXPORT void tfn_shared_free(void *p) {
  size_t start = (size_t)((char *)p - segment[rank_]);
  pthread_mutex_lock(&arena_lock);
  for (int i = 0; i < n_used; i++) {
    if (used[i].start != start) continue;
    Range block = used[i];
    used[i] = used[--n_used];
    int at = 0; /* free_ranges stay sorted by start; merge with the neighbours */
    while (at < n_free && free_ranges[at].start < block.start) at++;
    int merge_left = at > 0 && free_ranges[at - 1].start + free_ranges[at - 1].bytes == block.start;
    int merge_right = at < n_free && block.start + block.bytes == free_ranges[at].start;
    if (merge_left && merge_right) {
      free_ranges[at - 1].bytes += block.bytes + free_ranges[at].bytes;
      memmove(free_ranges + at, free_ranges + at + 1, (size_t)(n_free - at - 1) * sizeof(Range));
      n_free--;
    } else if (merge_left) {
      free_ranges[at - 1].bytes += block.bytes;
    } else if (merge_right) {
      free_ranges[at].start = block.start;
      free_ranges[at].bytes += block.bytes;
    } else if (n_free < MAX_RANGES) {
      memmove(free_ranges + at + 1, free_ranges + at, (size_t)(n_free - at) * sizeof(Range));
      free_ranges[at] = block;
      n_free++;
    } /* else: a range the arena loses (only with more than MAX_RANGES holes) */
    break;
  }
  pthread_mutex_unlock(&arena_lock);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void peer_gone(int r) {
  fprintf(stderr, "tfn.distribute: replica %d of %d: replica %d (process %d) has exited during an all-reduce; "
                  "aborting the job\n", rank_, size_, r, (int)pid_of[r]);
  fflush(stderr);
  if (abort_fn) abort_fn(comm_handle, 1);
  _exit(1);
}

/* Every replica has passed as many barriers as this one. */
static void barrier(void) {
  int64_t mine = ++arrived;
  __atomic_store_n(&control(rank_)->arrived, mine, __ATOMIC_RELEASE);
  for (int r = 0; r < size_; r++) {
    if (r == rank_) continue;
    long spins = 0;
    double since = 0;
    while (__atomic_load_n(&control(r)->arrived, __ATOMIC_ACQUIRE) < mine) {
      if (++spins < 4096) {
        cpu_relax();
        continue;
      }
      sched_yield(); /* a long wait: the other replica is descheduled or still computing */
      if ((spins & 1023) == 0) {
        double t = seconds();
        if (since == 0) since = t;
        else if (t - since > 1.0) {
          if (kill(pid_of[r], 0) != 0 && errno == ESRCH) peer_gone(r);
          since = t;
        }
      }
    }
  }
}

#define KIND_F32 1
#define KIND_F64 2
#define KIND_I32 3
#define KIND_I64 4
#define BLOCK 512

/* Chunk [lo, hi) of every replica's buffer (src[r]) summed in rank order and written to all of them, a block at a
   time through a stack buffer (one stream at a time: twice as fast as one loop reading and writing both buffers
   of a 2-replica job; 2 KiB blocks measured fastest, 512 B - 16 KiB). */
#define SUM_CHUNK(T)                                                                                           \
  do {                                                                                                         \
    T *src[MAX_REPLICAS];                                                                                      \
    for (int r = 0; r < size_; r++) src[r] = (T *)(segment[r] + off[r]);                                      \
    for (int64_t b = lo; b < hi; b += BLOCK) {                                                                 \
      int64_t e = b + BLOCK < hi ? b + BLOCK : hi;                                                             \
      T acc[BLOCK];                                                                                            \
      const T *s0 = src[0] + b;                                                                                \
      for (int64_t i = 0; i < e - b; i++) acc[i] = s0[i];                                                      \
      for (int r = 1; r < size_; r++) {                                                                        \
        const T *s = src[r] + b;                                                                               \
        for (int64_t i = 0; i < e - b; i++) acc[i] += s[i];                                                    \
      }                                                                                                        \
      for (int r = 0; r < size_; r++) {                                                                        \
        T *d = src[r] + b;                                                                                     \
        for (int64_t i = 0; i < e - b; i++) d[i] = acc[i];                                                     \
      }                                                                                                        \
    }                                                                                                          \
  } while (0)

/* Memory-bound, but SSE2's 16-byte loads leave some of a core's bandwidth unused: AVX2 / AVX-512 clones, picked
   when the library is loaded (GCC's target_clones, on x86-64). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WIDE_CLONES __attribute__((optimize("O3"), target_clones("avx512f", "avx2", "default")))
#else
#define WIDE_CLONES
#endif
WIDE_CLONES static void sum_chunk(int kind, const int64_t *off, int64_t lo, int64_t hi) {
  switch (kind) {
  case KIND_F32: SUM_CHUNK(float); break;
  case KIND_F64: SUM_CHUNK(double); break;
  case KIND_I32: SUM_CHUNK(int32_t); break;
  case KIND_I64: SUM_CHUNK(int64_t); break;
  }
}

/* Sum `count` elements of `kind` at buf across the replicas, in place. 0: done; 1: not done here (some replica's
   buffer is outside its arena, or the replicas disagree): every replica returns 1, and calls MPI instead. */
EXPORT int tfn_shared_allreduce(void *buf, int64_t count, int32_t kind) {
  if (__atomic_load_n(&rank_, __ATOMIC_ACQUIRE) < 0) return 1;
  int64_t n = ++calls;
  Record *mine = &control(rank_)->record[n & 1];
  mine->offset = in_arena(buf) ? (int64_t)((char *)buf - segment[rank_]) : -1;
  mine->count = count;
  mine->kind = kind;
  double t0 = seconds();
  barrier();
  int64_t off[MAX_REPLICAS];
  for (int r = 0; r < size_; r++) {
    const Record *theirs = &control(r)->record[n & 1];
    if (theirs->offset < 0 || theirs->count != count || theirs->kind != kind || kind < KIND_F32 || kind > KIND_I64)
      return 1;
    off[r] = theirs->offset;
  }
  /* chunk r: whole cache lines (16 f32) except the last */
  int64_t lines = (count + 15) / 16;
  int64_t lo = lines * rank_ / size_ * 16, hi = lines * (rank_ + 1) / size_ * 16;
  if (hi > count) hi = count;
  double t1 = seconds();
  if (lo < hi) sum_chunk(kind, off, lo, hi);
  double t2 = seconds();
  barrier();
  double t3 = seconds();
  spent_ns[0] += (int64_t)(1e9 * (t1 - t0));
  spent_ns[1] += (int64_t)(1e9 * (t2 - t1));
  spent_ns[2] += (int64_t)(1e9 * (t3 - t2));
  summed++;
  return 0;
}

/* out[0]: all-reduces this process called here; out[1]: those done through shared memory (the rest: MPI);
   out[2..4]: nanoseconds those spent waiting for the other replicas, summing, and in the closing barrier. */
EXPORT void tfn_shared_stats(int64_t *out) {
  out[0] = calls;
  out[1] = summed;
  for (int i = 0; i < 3; i++) out[2 + i] = spent_ns[i];
}
