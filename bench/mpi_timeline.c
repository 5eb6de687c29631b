/* bench/distribute.py --phases: an MPI profiling-interface (PMPI) library, preloaded into the replicas of a
 * 2-process job, that records when each MPI_Allreduce is entered and left (CLOCK_MONOTONIC, one clock for every
 * process of the machine, as Python's time.perf_counter) and its element count, and writes them at exit to
 * $TFN_MPI_TIMELINE.<rank>: one "enter exit count" line per call. Built by the bench with mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_CALLS 200000
static double entered[MAX_CALLS], left[MAX_CALLS];
static int counts[MAX_CALLS];
static long calls;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    double start = now();
    int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
    if (calls < MAX_CALLS) {
        entered[calls] = start;
        left[calls] = now();
        counts[calls++] = count;
    }
    return rc;
}

static void write_timeline(void) {
    const char *prefix = getenv("TFN_MPI_TIMELINE"), *rank = getenv("PMI_RANK");
    char path[4096];
    if (prefix == NULL)
        return;
    snprintf(path, sizeof path, "%s.%s", prefix, rank ? rank : "0");
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return;
    for (long i = 0; i < calls; i++)
        fprintf(out, "%.9f %.9f %d\n", entered[i], left[i], counts[i]);
    fclose(out);
}

__attribute__((constructor)) static void at_load(void) { atexit(write_timeline); }
