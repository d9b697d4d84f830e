# OpenMPI's header folder and library (Debian: libopenmpi-dev), for hw/'s multi-node
# bootstrap and tools/mpi's sweep module: SYMMESH_MPI_INCLUDE and SYMMESH_MPI_LIB, unset
# when absent. The explicit paths matter: SimGrid's SMPI also ships an mpi.h, which is not
# an MPI to bootstrap or run on.
find_path(SYMMESH_MPI_INCLUDE mpi.h
  HINTS /usr/lib/x86_64-linux-gnu/openmpi/include /usr/lib/aarch64-linux-gnu/openmpi/include
  NO_DEFAULT_PATH NO_CACHE)
find_library(SYMMESH_MPI_LIB mpi
  HINTS /usr/lib/x86_64-linux-gnu/openmpi/lib /usr/lib/aarch64-linux-gnu/openmpi/lib
        /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu
  NO_DEFAULT_PATH NO_CACHE)
