/* A lattice Boltzmann fluid solver in the manner of SPEC CPU2006's
 * 470.lbm: the D3Q19 lattice with the BGK collision operator, two grids
 * (the step reads one and writes the other), push streaming to the 18
 * neighbours, periodic boundaries and bounce-back at a spherical obstacle.
 * Every step reads and writes every cell's 19 distributions, so the
 * program streams through both grids. The loops over the 19 directions
 * are unrolled, as 470.lbm writes them out, so that the lattice's
 * constant velocities fold into the arithmetic. Written for spmsim's suite
 * (configs/suite/memory-intensive.toml); usage: lbm NX NY NZ STEPS. */
#include <stdio.h>
#include <stdlib.h>

#define Q 19
static const int cx[Q] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0};
static const int cy[Q] = {0, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 0, 0, 1, -1, 1, -1};
static const int cz[Q] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, -1, 1};
/* The direction opposite each one (bounce-back). */
static const int opposite[Q] = {0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15, 18, 17};
static const double weight[Q] = {1.0 / 3,  1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18,
                                 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36,
                                 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36};

static int nx, ny, nz;

static long cell(int x, int y, int z) {
    return ((long)z * ny + y) * nx + x;
}

/* The neighbour of coordinate v (of n) one step d in {-1, 0, 1} away, on
 * the periodic lattice. */
static int step(int v, int d, int n) {
    v += d;
    return v < 0 ? n - 1 : v == n ? 0 : v;
}

static double equilibrium(int i, double rho, double ux, double uy, double uz) {
    double cu = 3.0 * (cx[i] * ux + cy[i] * uy + cz[i] * uz);
    double uu = 1.5 * (ux * ux + uy * uy + uz * uz);
    return weight[i] * rho * (1.0 + cu + 0.5 * cu * cu - uu);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s NX NY NZ STEPS\n", argv[0]);
        return 2;
    }
    nx = atoi(argv[1]);
    ny = atoi(argv[2]);
    nz = atoi(argv[3]);
    int steps = atoi(argv[4]);
    if (nx < 4 || ny < 4 || nz < 4 || steps < 0) {
        fprintf(stderr, "each side at least 4, steps not negative\n");
        return 2;
    }
    long cells = (long)nx * ny * nz;
    double *src = malloc(sizeof(double) * Q * cells);
    double *dst = malloc(sizeof(double) * Q * cells);
    unsigned char *solid = calloc(cells, 1);
    if (!src || !dst || !solid) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* A sphere in the first third of the channel. */
    double r2 = (ny / 5.0) * (ny / 5.0);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                double dx = x - nx / 3.0, dy = y - ny / 2.0, dz = z - nz / 2.0;
                solid[cell(x, y, z)] = dx * dx + dy * dy + dz * dz < r2;
            }
    /* Everywhere the equilibrium of a slow flow along x. */
    double initial[Q];
    for (int i = 0; i < Q; i++) initial[i] = equilibrium(i, 1.0, 0.05, 0.0, 0.0);
    for (long c = 0; c < cells; c++)
        for (int i = 0; i < Q; i++) src[c * Q + i] = initial[i];
    const double omega = 1.85;
    /* A neighbour's offset in cells, for a cell away from the faces. */
    long off[Q];
    for (int i = 0; i < Q; i++) off[i] = ((long)cz[i] * ny + cy[i]) * nx + cx[i];
    for (int s = 0; s < steps; s++) {
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < nx; x++) {
                    long c = cell(x, y, z);
                    const double *f = &src[c * Q];
                    long to[Q];
                    if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1) {
                        _Pragma("GCC unroll 19") for (int i = 0; i < Q; i++) to[i] = (c + off[i]) * Q;
                    } else {
                        /* On a face: the periodic lattice wraps around. */
                        for (int i = 0; i < Q; i++) to[i] = cell(step(x, cx[i], nx), step(y, cy[i], ny), step(z, cz[i], nz)) * Q;
                    }
                    if (solid[c]) {
                        /* Bounce-back: each distribution returns the way it came. */
                        for (int i = 0; i < Q; i++) dst[to[i] + opposite[i]] = f[i];
                        continue;
                    }
                    double rho = 0, ux = 0, uy = 0, uz = 0;
                    _Pragma("GCC unroll 19") for (int i = 0; i < Q; i++) {
                        rho += f[i];
                        ux += cx[i] * f[i];
                        uy += cy[i] * f[i];
                        uz += cz[i] * f[i];
                    }
                    ux /= rho;
                    uy /= rho;
                    uz /= rho;
                    double uu = 1.5 * (ux * ux + uy * uy + uz * uz);
                    _Pragma("GCC unroll 19") for (int i = 0; i < Q; i++) {
                        double cu = 3.0 * (cx[i] * ux + cy[i] * uy + cz[i] * uz);
                        double feq = weight[i] * rho * (1.0 + cu + 0.5 * cu * cu - uu);
                        dst[to[i] + i] = f[i] + omega * (feq - f[i]);
                    }
                }
        double *t = src;
        src = dst;
        dst = t;
    }
    double mass = 0;
    for (long c = 0; c < cells; c++)
        for (int i = 0; i < Q; i++) mass += src[c * Q + i];
    printf("cells %ld, steps %d, mass per cell %.6f\n", cells, steps, mass / cells);
    return 0;
}
