// Package launch knows how gnnrun is started: OpenMPI hostfiles, the mpirun
// and sbatch command lines, the rank and local rank that OpenMPI or Slurm put
// in the environment, and the binding of one GPU per local rank.
package launch
