/* tfn's buffer cache: large heap blocks the compiled code frees are kept for its next allocation of about their
   size, so that a repeated call reuses memory whose pages are already mapped instead of faulting them in again.

   glibc serves a block of 128 KiB and more (up to 32 MiB as its threshold adapts) with its own mmap and unmaps it
   on free: every call of a function with large temporaries or results paid one page fault per 4 KiB touched
   (the RGB-input convs of bench case (c): ~43 % of their time). Compiled code calls tfn_malloc / tfn_free
   (passes/tfn_cache_large_buffers.py, weakly: a module loaded where they are not bound uses malloc and free), and
   so do the owners of the result arrays; this file is compiled into runtime/fastcall.py's extension, loaded into the
   global symbol scope before any compiled code.

   Every block here IS a malloc block (tfn_free also takes the blocks of _shared_allreduce.c's arena, which it hands
   back there): tfn_free accepts any pointer free accepts (malloc_usable_size gives its
   size), and a block tfn_malloc gives may be handed to free. Blocks under MIN_BYTES go straight to malloc and free.
   A freed large block is kept (up to SLOTS blocks and `limit` bytes in all; the least recently freed are released
   first); tfn_malloc(n) takes the smallest kept block of n to n + n/4 bytes. One mutex guards the list (kernels
   allocate on worker threads; several calls may run at once); blocks are released with free outside it. Around
   fork the mutex is held, so a child never inherits it locked; the child's list is its own copy of the parent's,
   naming blocks its copied address space holds. */
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define MIN_BYTES ((size_t)128 << 10)
#define SLOTS 64
#define EXPORT __attribute__((visibility("default")))

typedef struct {
  void *ptr;
  size_t bytes; /* malloc_usable_size */
  uint64_t stamp; /* when it was freed: the oldest is released first */
} Entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Entry kept[SLOTS];
static int n_kept;
static size_t kept_bytes, limit;
static uint64_t clock_, hits, misses, released;

static void lock_for_fork(void) { pthread_mutex_lock(&lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void start(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t sixteenth = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 16 : 0;
  limit = sixteenth < ((size_t)1 << 30) ? sixteenth : ((size_t)1 << 30); /* 1/16 of memory, at most 1 GiB */
  pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

/* Under the lock: take out the oldest kept blocks until `need` more bytes fit (in count and bytes); they go to
   out[], to be freed after unlocking. */
static int evict(size_t need, void **out) {
  int n = 0;
  while (n_kept && ((need && n_kept == SLOTS) || kept_bytes + need > limit)) {
    int oldest = 0;
    for (int i = 1; i < n_kept; i++)
      if (kept[i].stamp < kept[oldest].stamp) oldest = i;
    out[n++] = kept[oldest].ptr;
    kept_bytes -= kept[oldest].bytes;
    kept[oldest] = kept[--n_kept];
    released++;
  }
  return n;
}

EXPORT void *tfn_malloc(size_t n) {
  if (n < MIN_BYTES) return malloc(n);
  void *p = NULL;
  pthread_mutex_lock(&lock);
  int best = -1;
  for (int i = 0; i < n_kept; i++)
    if (kept[i].bytes >= n && kept[i].bytes - n <= n / 4 && (best < 0 || kept[i].bytes < kept[best].bytes))
      best = i;
  if (best >= 0) {
    p = kept[best].ptr;
    kept_bytes -= kept[best].bytes;
    kept[best] = kept[--n_kept];
    hits++;
  } else {
    misses++;
  }
  pthread_mutex_unlock(&lock);
  return p ? p : malloc(n);
}

int tfn_shared_owns(const void *p); /* _shared_allreduce.c: its arena's blocks are not malloc blocks */
void tfn_shared_free(void *p);

EXPORT void tfn_free(void *p) {
  if (!p) return;
  if (tfn_shared_owns(p)) {
    tfn_shared_free(p);
    return;
  }
  size_t bytes = malloc_usable_size(p);
  if (bytes < MIN_BYTES) {
    free(p);
    return;
  }
  void *drop[SLOTS + 1];
  int n_drop = 0;
  pthread_mutex_lock(&lock);
  if (bytes > limit) {
    drop[n_drop++] = p;
  } else {
    n_drop = evict(bytes, drop);
    kept[n_kept++] = (Entry){p, bytes, ++clock_};
    kept_bytes += bytes;
  }
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n_drop; i++) free(drop[i]);
}

/* Set the byte limit (releasing kept blocks past it); returns the previous one. (size_t)-1 only reads it. */
EXPORT size_t tfn_buffer_cache_limit(size_t bytes) {
  void *drop[SLOTS + 1];
  int n_drop = 0;
  pthread_mutex_lock(&lock);
  size_t before = limit;
  if (bytes != (size_t)-1) {
    limit = bytes;
    n_drop = evict(0, drop);
  }
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n_drop; i++) free(drop[i]);
  return before;
}

/* Release every kept block. */
EXPORT void tfn_buffer_cache_release(void) {
  void *drop[SLOTS];
  pthread_mutex_lock(&lock);
  int n_drop = n_kept;
  for (int i = 0; i < n_kept; i++) drop[i] = kept[i].ptr;
  released += n_kept;
  n_kept = 0;
  kept_bytes = 0;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n_drop; i++) free(drop[i]);
}

/* out[0..5]: hits, misses, blocks released, blocks kept, bytes kept, the byte limit. */
EXPORT void tfn_buffer_cache_stats(uint64_t *out) {
  pthread_mutex_lock(&lock);
  out[0] = hits;
  out[1] = misses;
  out[2] = released;
  out[3] = (uint64_t)n_kept;
  out[4] = kept_bytes;
  out[5] = limit;
  pthread_mutex_unlock(&lock);
}
