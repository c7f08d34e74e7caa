/* SPDX-License-Identifier: BSD-2-Clause
 * An MPI program for tests/multiproc:mpi_test: point-to-point around a
 * ring, a collective and a barrier; every rank prints what it got and
 * checks it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, ok = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* Point to point: a token from the left neighbour, and a larger
	 * message (several packets) from the right one. */
	int token = rank, got = -1;
	MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 7, &got, 1,
		     MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	ok &= got == (rank + size - 1) % size;

	static int big_out[100000], big_in[100000];
	for (int i = 0; i < 100000; i++)
		big_out[i] = rank * 1000003 + i;
	MPI_Sendrecv(big_out, 100000, MPI_INT, (rank + size - 1) % size, 8,
		     big_in, 100000, MPI_INT, (rank + 1) % size, 8,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 0; i < 100000; i++)
		ok &= big_in[i] == ((rank + 1) % size) * 1000003 + i;

	/* A collective. */
	long mine = rank + 1, sum = 0;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	ok &= sum == (long)size * (size + 1) / 2;

	MPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d of %d: token %d, 400000 bytes from the right %s, "
	       "sum %ld: %s\n", rank, size, got, ok ? "intact" : "DAMAGED",
	       sum, ok ? "ok" : "WRONG");
	MPI_Finalize();
	return ok ? 0 : 1;
}
