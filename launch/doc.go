// Package launch knows how gnnrun is started: OpenMPI hostfiles, the mpirun
// and sbatch command lines, the rank and local rank that OpenMPI, MPICH or
// Slurm put in the environment, and the binding of one GPU per local rank.
//
// It stands alone (no MPI, no cgo), so it works before MPI is initialised
// and in any tool that prepares a job:
//
//   - ReadHostfile / ParseHostfile validate an OpenMPI hostfile and report a
//     bad line as "launch: FILE:LINE: reason";
//   - MPIRun builds an mpirun command line from a hostfile or a rank count,
//     adding --allow-run-as-root for root and --oversubscribe where it is
//     safe, and refusing more ranks than the hostfile's slots;
//   - Sbatch builds the sbatch command line that submits gnnrun.sbatch (the
//     batch script in this directory, also returned by SbatchScript);
//   - EnvLocal reads the local rank and size from the launcher's variables;
//   - EnvWorldRank and EnvWorldSize read the world rank and size the launcher
//     announced, which the build without MPI checks to refuse running as
//     one of several ranks;
//   - BindGPU sets CUDA_VISIBLE_DEVICES to one device per local rank.
//
// gnnrun itself calls EnvLocal and BindGPU at start-up, right after MPI is
// up, falling back to the node-local communicator when no launcher variable
// says where the rank sits.
package launch
