/*
 * slurm.h - what Slurm tells a job step through its environment, and the
 * launch mistakes it reveals. Pure: the environment is read through a getter
 * (getenv in the program, a table in the tests); nothing is invented when
 * Slurm is absent.
 */
#ifndef TPB_SLURM_H
#define TPB_SLURM_H

#include <stddef.h>

#include "base/topo.h"
#include "base/tpb_status.h"

#define TPB_SLURM_MAX_NODES 65536
#define TPB_SLURM_NAME_LEN TPB_HOST_LEN

/** Reads one environment variable (NULL if unset). */
typedef const char *(*tpb_env_fn)(const char *name);

/** Slurm's facts, each string whole as the environment has it ("" if unset; owned). */
typedef struct {
    int present;          /**< SLURM_JOB_ID is set */
    char *job_id;         /**< SLURM_JOB_ID */
    char *step_id;        /**< SLURM_STEP_ID ("" in a batch script outside srun) */
    char *cluster;        /**< SLURM_CLUSTER_NAME */
    char *partition;      /**< SLURM_JOB_PARTITION */
    char *nodelist;       /**< SLURM_JOB_NODELIST, compressed ("node[01-03,07]") */
    char *tasks_per_node; /**< SLURM_TASKS_PER_NODE ("2(x3),1") */
    int ntasks;           /**< SLURM_STEP_NUM_TASKS, else SLURM_NTASKS (0 if unset) */
    int cpus_per_task;    /**< SLURM_CPUS_PER_TASK (0 if unset) */
    char *gpus_per_task;  /**< SLURM_GPUS_PER_TASK */
    char *gpus_per_node;  /**< SLURM_GPUS_PER_NODE */
} tpb_slurm_t;

/** Fill s from the environment (s->present = 0 and all "" without Slurm); nothing is
 *  cut. Returns TPB_ERR_NOMEM (s all "") without memory. Free with tpb_slurm_free. */
tpb_status_t tpb_slurm_from_env(tpb_slurm_t *s, tpb_env_fn env);

void tpb_slurm_free(tpb_slurm_t *s);

/**
 * Expand a Slurm hostlist ("node[01-03,07],login1") into names[max] in order.
 * Returns the number of names, or -1 if the list is malformed or has more
 * than max names.
 */
int tpb_hostlist_expand(const char *list, char (*names)[TPB_SLURM_NAME_LEN], int max);

/**
 * Before MPI_Init: 1 if this process was started by srun as one of several
 * tasks but with no PMI/PMIx for MPI to find its peers (srun --mpi=none, or an
 * MPI built without Slurm's PMI): every task would come up as a singleton (or
 * Open MPI aborts in MPI_Init). *tasks receives the step's task count.
 */
int tpb_slurm_missing_pmi(tpb_env_fn env, int *tasks);

/** After MPI_Init: 1 if Slurm started more tasks than the MPI world has ranks. */
int tpb_slurm_world_mismatch(const tpb_slurm_t *s, int world_size);

#endif /* TPB_SLURM_H */
