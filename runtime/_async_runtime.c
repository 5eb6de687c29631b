/* tfn's implementation of the C interface of MLIR's async runtime: the `mlirAsyncRuntime*` functions that code
   lowered by `convert-async-to-llvm` calls (passes/tfn_async_parallel.py), in place of MLIR's reference runtime
   (libmlir_async_runtime.so, whose thread pool is LLVM's and whose library needs libLLVM). runtime/async_runtime.py
   builds it with `cc`, keeps it in the artifact cache and loads it into the process's global symbol scope before any
   compiled library that calls it; the compiled libraries no longer link a runtime library of their own.

   Objects. A token, a value (a token with a payload) and a group are reference counted: a token or a value starts
   with two references (the creator's and the one the task that emplaces it drops: EmplaceToken/SetTokenError drop
   it), a group with one. A token or a value is unavailable, then available or in error, for good; a group counts
   the tokens still pending out of the size it was created with, and the errors among those done. Each object keeps
   a list of awaiters under its mutex: coroutines to resume (Await*AndExecute) and, on a token, groups to count it
   in (AddTokenToGroup). The one that makes an object ready takes the list under the mutex and runs it outside it;
   an awaiter added later sees the object ready and runs at once, on the caller's thread.

   Threads. A small pool of persistent threads (tfn_async_configure: the target's worker count less the caller, who
   runs blocks itself; unconfigured, the CPUs of the process's affinity mask less one) takes tasks (Execute: a coroutine to resume) from one FIFO queue. Out of tasks, a pool thread
   SPINS for a while (spin_us, default 100 us: a pause instruction, the clock read every 32, the core yielded
   between reads after the first 5 us; not at all for 20 ms after a spinning thread was preempted: see spin_while)
   watching the queue's count, then sleeps on a futex; Execute wakes one sleeper only when one sleeps. Kernels called back to back (a
   training step runs dozens) so find a pool thread awake: MLIR's pool, whose threads always sleep on a condition
   variable, took tens of microseconds to wake one, ~0.2 ms per 256^3 matmul on two cores. A blocking await
   (AwaitToken/Value/AllInGroup) first runs queued tasks itself (a task its own kernel queued that no pool thread
   took yet finishes at once: there is nothing left for it to take), then spins as long, then sleeps on a futex of
   the awaited object, woken by whoever makes it ready. A forked child starts its own threads on its first Execute.

   Errors: SetTokenError/SetValueError leave the object in error, a group counts its tokens in error; lowered code
   reads them (Is*Error) exactly as with MLIR's runtime. tfn's kernels report their own failures through the
   error channel (passes/tfn_guard_worker_allocs.py), never through a token. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef void *CoroHandle;
typedef void (*CoroResume)(void *);

enum { UNAVAILABLE = 0, AVAILABLE = 1, IN_ERROR = 2 };
enum { TOKEN, VALUE, GROUP };

typedef struct Group Group;

/* One pending reaction to an object becoming ready: resume a coroutine, or count a token in a group. */
typedef struct Awaiter {
  struct Awaiter *next;
  CoroHandle handle;
  CoroResume resume;
  Group *group; /* non-null: count the token in this group (which the awaiter holds a reference of) */
} Awaiter;

typedef struct {
  _Atomic int64_t refs;
  int kind;
  pthread_mutex_t mu;       /* guards awaiters and the transition to ready */
  Awaiter *awaiters;        /* newest first */
  _Atomic uint32_t sleepers; /* threads asleep (or about to be) on the object's futex word */
} Object;

typedef struct {
  Object o;
  _Atomic uint32_t state; /* the futex word: UNAVAILABLE until emplaced or in error */
  void *storage;          /* a value's payload (null for a token) */
} Token;

struct Group {
  Object o;
  _Atomic uint32_t pending; /* the futex word: tokens not yet ready out of the group's size */
  _Atomic int32_t errors;
  _Atomic int64_t rank;
};

static long futex(_Atomic uint32_t *word, int op, uint32_t value) {
  return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, value, NULL, NULL, 0);
}

static inline void cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- The pool ---------------------------------------------------------------------------------------------- */

typedef struct Task {
  struct Task *next;
  CoroHandle handle;
  CoroResume resume;
} Task;

static struct {
  pthread_mutex_t mu; /* guards the queue and the count of started threads */
  Task *head, *tail;
  int threads;               /* pool threads to run (tfn_async_configure) */
  _Atomic int started;       /* pool threads started in this process */
  _Atomic int64_t spin_ns;   /* how long an idle thread spins before it sleeps */
  /* The words idle threads watch, on a cache line of their own: the caller queueing a kernel's tasks then locks
     and unlocks the mutex without taking that line away from every spinning thread each time. */
  _Alignas(64) _Atomic int64_t queued; /* tasks in the queue that no thread has claimed yet (claim_task) */
  _Atomic uint32_t epoch;    /* the pool's futex word: bumped by every Execute */
  _Atomic uint32_t sleepers; /* pool threads asleep (or about to be) on epoch */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .spin_ns = 100000};

/* Claim one of the queued tasks (a decrement of `queued` from above zero), so that only threads sure to find a
   task take the mutex: when a kernel queues its tasks, every spinning thread sees the count change, and on a
   16-core machine 15 of them would else queue on the mutex, most to find the queue empty, while the caller waits
   behind them to queue the next task. Execute counts a task after it is in the queue, so a claimed task is there. */
static bool claim_task(void) {
  int64_t queued = atomic_load_explicit(&pool.queued, memory_order_relaxed);
  while (queued > 0)
    if (atomic_compare_exchange_weak(&pool.queued, &queued, queued - 1))
      return true;
  return false;
}

static bool pop_task(CoroHandle *handle, CoroResume *resume) {
  if (!claim_task())
    return false;
  pthread_mutex_lock(&pool.mu);
  Task *t = pool.head;
  pool.head = t->next;
  if (pool.head == NULL)
    pool.tail = NULL;
  pthread_mutex_unlock(&pool.mu);
  *handle = t->handle;
  *resume = t->resume;
  free(t);
  return true;
}

static bool run_queued_task(void) {
  CoroHandle handle;
  CoroResume resume;
  if (!pop_task(&handle, &resume))
    return false;
  resume(handle);
  return true;
}

/* Spin until *word differs from `seen` (or the queue has a task, when `tasks`), at most the spin time; true if
   it changed meanwhile (or a task came). After the first YIELD_AFTER_NS the spinning thread also yields its core
   between reads (sched_yield: at once back when no other thread wants the core). A read of the clock more than
   PREEMPTED_NS after the one before means another thread had this core meanwhile: the machine has more runnable
   threads than cores, where a spinning thread only burns the time slice the thread it waits for (a pool thread
   finishing a block, the caller with the next kernel) or another process needs, and spends its own fair share of
   the CPU, which the scheduler then takes out of its next wake-up. So it stops, and no thread of the process spins
   for the next BACKOFF_NS: they sleep at once, as MLIR's runtime's do. */
#define YIELD_AFTER_NS 5000
#define PREEMPTED_NS 30000
#define BACKOFF_NS 20000000

static _Atomic int64_t no_spin_until; /* now_ns() before which nobody spins (contention seen) */

static bool spin_while(_Atomic uint32_t *word, uint32_t seen, bool tasks) {
  int64_t budget = atomic_load_explicit(&pool.spin_ns, memory_order_relaxed);
  if (budget <= 0)
    return false;
  int64_t start = now_ns(), last = start, t;
  if (start < atomic_load_explicit(&no_spin_until, memory_order_relaxed))
    return false;
  for (;;) {
    for (int i = 0; i < 32; i++) {
      if (atomic_load_explicit(word, memory_order_acquire) != seen)
        return true;
      if (tasks && atomic_load_explicit(&pool.queued, memory_order_relaxed) != 0)
        return true;
      cpu_pause();
    }
    t = now_ns();
    if (t - last > PREEMPTED_NS) {
      atomic_store_explicit(&no_spin_until, t + BACKOFF_NS, memory_order_relaxed);
      return false;
    }
    if (t - start >= budget)
      return false;
    if (t - start >= YIELD_AFTER_NS)
      sched_yield();
    last = t;
  }
}

static void *pool_thread(void *arg) {
  (void)arg;
  for (;;) {
    if (run_queued_task())
      continue;
    uint32_t epoch = atomic_load(&pool.epoch);
    if (spin_while(&pool.epoch, epoch, true))
      continue;
    /* Asleep only if no Execute came after `epoch` was read: Execute bumps epoch after queueing, then wakes a
       sleeper if it counts one (all sequentially consistent). */
    atomic_fetch_add(&pool.sleepers, 1);
    if (atomic_load(&pool.queued) == 0)
      futex(&pool.epoch, FUTEX_WAIT, epoch);
    atomic_fetch_sub(&pool.sleepers, 1);
  }
  return NULL;
}

/* Without tfn_async_configure (a library compiled ahead of time, runtime/aot.py): the CPUs this process may run
   on, less the caller. */
static int default_threads(void) {
  cpu_set_t cpus;
  int n = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  return n > 2 ? n - 1 : 1;
}

static void start_threads(void) {
  pthread_mutex_lock(&pool.mu);
  if (pool.threads <= 0)
    pool.threads = default_threads();
  int want = pool.threads;
  while (pool.started < want) {
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int failed = pthread_create(&thread, &attr, pool_thread, NULL);
    pthread_attr_destroy(&attr);
    if (failed)
      break; /* fewer threads (or none): blocking awaits run the queued tasks themselves */
    pool.started++;
  }
  pthread_mutex_unlock(&pool.mu);
}

static void forked_child(void) {
  /* The child has none of the parent's threads: start them again on the first Execute. Tasks queued in the
     parent at the fork are not the child's to run. */
  pthread_mutex_init(&pool.mu, NULL);
  pool.head = pool.tail = NULL;
  atomic_store(&pool.queued, 0);
  atomic_store(&pool.sleepers, 0);
  atomic_store(&pool.started, 0);
}

__attribute__((constructor)) static void init(void) {
  pthread_atfork(NULL, NULL, forked_child);
}

/* Set the pool's size (threads >= 1; takes effect for threads not started yet) and its spin time (microseconds,
   0: sleep at once). Called by runtime/async_runtime.py right after loading. */
API void tfn_async_configure(int threads, int64_t spin_us) {
  pthread_mutex_lock(&pool.mu);
  if (threads >= 1)
    pool.threads = threads;
  pthread_mutex_unlock(&pool.mu);
  if (spin_us >= 0)
    atomic_store(&pool.spin_ns, spin_us * 1000);
}

/* The pool threads started in this process (for tests). */
API int tfn_async_started_threads(void) {
  pthread_mutex_lock(&pool.mu);
  int n = pool.started;
  pthread_mutex_unlock(&pool.mu);
  return n;
}

/* Objects created and not yet destroyed (for tests: every call releases what it made). */
static _Atomic int64_t live_objects;

API int64_t tfn_async_live_objects(void) { return atomic_load(&live_objects); }

/* ---- Objects ----------------------------------------------------------------------------------------------- */

/* `bytes` of zeroed memory; out of memory, the process aborts with a message, as MLIR's runtime does (operator
   new): the compiled code that calls the runtime has no way to report it. */
static void *zalloc(size_t bytes) {
  void *p = calloc(1, bytes);
  if (p == NULL) {
    fputs("tfn async runtime: out of memory\n", stderr);
    abort();
  }
  return p;
}

static void *new_object(size_t bytes, int kind, int64_t refs) {
  Object *o = zalloc(bytes);
  atomic_init(&o->refs, refs);
  o->kind = kind;
  pthread_mutex_init(&o->mu, NULL);
  atomic_fetch_add(&live_objects, 1);
  return o;
}

static void destroy(Object *o) {
  pthread_mutex_destroy(&o->mu);
  if (o->kind != GROUP)
    free(((Token *)o)->storage);
  free(o);
  atomic_fetch_sub(&live_objects, 1);
}

API void mlirAsyncRuntimeAddRef(void *ptr, int64_t count) {
  atomic_fetch_add(&((Object *)ptr)->refs, count);
}

API void mlirAsyncRuntimeDropRef(void *ptr, int64_t count) {
  Object *o = ptr;
  if (atomic_fetch_sub(&o->refs, count) == count)
    destroy(o);
}

API void *mlirAsyncRuntimeCreateToken(void) { return new_object(sizeof(Token), TOKEN, 2); }

API void *mlirAsyncRuntimeCreateValue(int64_t size) {
  Token *v = new_object(sizeof(Token), VALUE, 2);
  v->storage = zalloc(size > 0 ? (size_t)size : 1);
  return v;
}

API void *mlirAsyncRuntimeCreateGroup(int64_t size) {
  Group *g = new_object(sizeof(Group), GROUP, 1);
  atomic_init(&g->pending, (uint32_t)size);
  return g;
}

static void run_awaiters(Awaiter *list, bool error);

/* One of the group's tokens is ready (in error or not). */
static void count_in_group(Group *g, bool error) {
  if (error)
    atomic_fetch_add(&g->errors, 1); /* before `pending` drops: whoever sees 0 pending sees the error */
  Awaiter *ready = NULL;
  pthread_mutex_lock(&g->o.mu);
  uint32_t left = atomic_fetch_sub(&g->pending, 1) - 1;
  if (left == 0) {
    ready = g->o.awaiters;
    g->o.awaiters = NULL;
  }
  pthread_mutex_unlock(&g->o.mu);
  if (left == 0) {
    if (atomic_load(&g->o.sleepers) != 0)
      futex(&g->pending, FUTEX_WAKE, INT_MAX);
    run_awaiters(ready, false);
  }
}

static void run_awaiters(Awaiter *list, bool error) {
  Awaiter *fifo = NULL; /* the list is newest first: run them in the order they were added */
  while (list != NULL) {
    Awaiter *next = list->next;
    list->next = fifo;
    fifo = list;
    list = next;
  }
  while (fifo != NULL) {
    Awaiter *a = fifo;
    fifo = a->next;
    if (a->group != NULL) {
      count_in_group(a->group, error);
      mlirAsyncRuntimeDropRef(a->group, 1);
    } else {
      a->resume(a->handle);
    }
    free(a);
  }
}

/* Queue a reaction on o, whose mutex the caller holds (newest first). */
static void add_awaiter(Object *o, CoroHandle handle, CoroResume resume, Group *group) {
  Awaiter *a = zalloc(sizeof(Awaiter));
  a->handle = handle;
  a->resume = resume;
  a->group = group;
  a->next = o->awaiters;
  o->awaiters = a;
}

API int64_t mlirAsyncRuntimeAddTokenToGroup(void *token, void *group) {
  Token *t = token;
  Group *g = group;
  int64_t rank = atomic_fetch_add(&g->rank, 1);
  pthread_mutex_lock(&t->o.mu);
  uint32_t state = atomic_load(&t->state);
  if (state == UNAVAILABLE) {
    mlirAsyncRuntimeAddRef(g, 1); /* the group lives until the token is counted in it */
    add_awaiter(&t->o, NULL, NULL, g);
  }
  pthread_mutex_unlock(&t->o.mu);
  if (state != UNAVAILABLE)
    count_in_group(g, state == IN_ERROR);
  return rank;
}

/* Make a token or value ready for good, run its awaiters, wake its sleepers and drop the task's reference. */
static void set_state(Token *t, uint32_t state) {
  pthread_mutex_lock(&t->o.mu);
  atomic_store(&t->state, state);
  Awaiter *ready = t->o.awaiters;
  t->o.awaiters = NULL;
  pthread_mutex_unlock(&t->o.mu);
  if (atomic_load(&t->o.sleepers) != 0)
    futex(&t->state, FUTEX_WAKE, INT_MAX);
  run_awaiters(ready, state == IN_ERROR);
  mlirAsyncRuntimeDropRef(t, 1);
}

API void mlirAsyncRuntimeEmplaceToken(void *token) { set_state(token, AVAILABLE); }
API void mlirAsyncRuntimeEmplaceValue(void *value) { set_state(value, AVAILABLE); }
API void mlirAsyncRuntimeSetTokenError(void *token) { set_state(token, IN_ERROR); }
API void mlirAsyncRuntimeSetValueError(void *value) { set_state(value, IN_ERROR); }

API bool mlirAsyncRuntimeIsTokenError(void *token) { return atomic_load(&((Token *)token)->state) == IN_ERROR; }
API bool mlirAsyncRuntimeIsValueError(void *value) { return atomic_load(&((Token *)value)->state) == IN_ERROR; }
API bool mlirAsyncRuntimeIsGroupError(void *group) { return atomic_load(&((Group *)group)->errors) > 0; }

/* Block until *word stops being `busy` (a token's state) or becomes 0 (a group's pending count, busy = ~0):
   run queued tasks, then spin, then sleep on the word. */
static void await_word(Object *o, _Atomic uint32_t *word, bool until_zero) {
  for (;;) {
    uint32_t seen = atomic_load(word);
    if (until_zero ? seen == 0 : seen != UNAVAILABLE)
      return;
    if (run_queued_task())
      continue;
    if (spin_while(word, seen, false))
      continue;
    atomic_fetch_add(&o->sleepers, 1);
    if (atomic_load(word) == seen)
      futex(word, FUTEX_WAIT, seen);
    atomic_fetch_sub(&o->sleepers, 1);
  }
}

API void mlirAsyncRuntimeAwaitToken(void *token) { await_word(token, &((Token *)token)->state, false); }
API void mlirAsyncRuntimeAwaitValue(void *value) { await_word(value, &((Token *)value)->state, false); }
API void mlirAsyncRuntimeAwaitAllInGroup(void *group) { await_word(group, &((Group *)group)->pending, true); }

API void *mlirAsyncRuntimeGetValueStorage(void *value) { return ((Token *)value)->storage; }

API void mlirAsyncRuntimeExecute(CoroHandle handle, CoroResume resume) {
  if (atomic_load_explicit(&pool.started, memory_order_relaxed) == 0)
    start_threads();
  Task *t = zalloc(sizeof(Task));
  t->next = NULL;
  t->handle = handle;
  t->resume = resume;
  pthread_mutex_lock(&pool.mu);
  if (pool.tail != NULL)
    pool.tail->next = t;
  else
    pool.head = t;
  pool.tail = t;
  atomic_fetch_add(&pool.queued, 1);
  pthread_mutex_unlock(&pool.mu);
  atomic_fetch_add(&pool.epoch, 1);
  if (atomic_load(&pool.sleepers) != 0)
    futex(&pool.epoch, FUTEX_WAKE, 1);
}

/* Entered with o's mutex held, which it releases: resume the coroutine once o is ready (`waiting`: it is not yet,
   as read under the mutex), now, on this thread, if it is. */
static void resume_when_ready(Object *o, int waiting, CoroHandle handle, CoroResume resume) {
  if (waiting)
    add_awaiter(o, handle, resume, NULL);
  pthread_mutex_unlock(&o->mu);
  if (!waiting)
    resume(handle);
}

/* Resume the coroutine once the token or value is ready. */
static void await_and_execute(Token *t, CoroHandle handle, CoroResume resume) {
  pthread_mutex_lock(&t->o.mu);
  resume_when_ready(&t->o, atomic_load(&t->state) == UNAVAILABLE, handle, resume);
}

API void mlirAsyncRuntimeAwaitTokenAndExecute(void *token, CoroHandle handle, CoroResume resume) {
  await_and_execute(token, handle, resume);
}

API void mlirAsyncRuntimeAwaitValueAndExecute(void *value, CoroHandle handle, CoroResume resume) {
  await_and_execute(value, handle, resume);
}

API void mlirAsyncRuntimeAwaitAllInGroupAndExecute(void *group, CoroHandle handle, CoroResume resume) {
  Group *g = group;
  pthread_mutex_lock(&g->o.mu);
  resume_when_ready(&g->o, atomic_load(&g->pending) != 0, handle, resume);
}

static int64_t worker_threads(void) {
  pthread_mutex_lock(&pool.mu);
  if (pool.threads <= 0)
    pool.threads = default_threads();
  int n = pool.threads;
  pthread_mutex_unlock(&pool.mu);
  return n;
}

/* (MLIR spells this one without the second `e`; both names are defined.) */
API int64_t mlirAsyncRuntimGetNumWorkerThreads(void) { return worker_threads(); }
API int64_t mlirAsyncRuntimeGetNumWorkerThreads(void) { return worker_threads(); }

API void mlirAsyncRuntimePrintCurrentThreadId(void) {
  printf("Current thread id: %ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
}
