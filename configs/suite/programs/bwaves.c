/* An implicit solver of the compressible Navier-Stokes equations in the
 * manner of SPEC CPU2006's 410.bwaves (Fortran 77, by Mark Kremenetsky),
 * which simulates blast waves in a three-dimensional, transonic,
 * transient, laminar viscous flow: a region of high pressure and density
 * at the centre of a cube, low pressure and density elsewhere, periodic
 * boundaries, so that the cube is one cell of an infinite lattice whose
 * expanding shocks meet their periodic images and slowly die away. Each
 * time step of SPEC's version linearises the equations about the current
 * flow (an unfactored implicit scheme): it computes the fluxes and the
 * right-hand side over the whole grid, assembles a block matrix whose 5x5
 * blocks couple each point's 5 conserved variables (density, three
 * momenta, energy) with its own and its 6 neighbours' (a block-7-point
 * matrix), solves the linear system by BiCGstab and adds the correction
 * dq to the flow. Its arrays are Fortran's, column-major with the
 * variable index fastest: q(5,nx,ny,nz), and one a(5,5,nx,ny,nz) per
 * block of the stencil. Its input file gives the grid, the flow's
 * parameters and the number of steps (test, train and ref differ only in
 * the grid and the steps); SPEC's description of the same program in
 * OMP2012 (351.bwaves) gives Reynolds number 1e5, Prandtl number 0.72
 * and CFL number 2.
 *
 * This program does the same kind of work, written afresh: the Euler
 * fluxes by the local Lax-Friedrichs (Rusanov) formula at the faces, the
 * viscous terms simplified to a Laplacian of the velocity and of the
 * internal and kinetic energy (no cross derivatives), with Re 1e5 and
 * Pr 0.72; an implicit Euler step at CFL 2, its matrix the exact
 * linearisation of that right-hand side with the face wave speeds
 * frozen: seven arrays of 5x5 blocks (the point's own block and one per
 * neighbour, 1400 bytes a point), assembled over the whole grid each
 * step, then an unpreconditioned BiCGstab from dq = 0 to a relative
 * residual of 1e-6 (at most 60 iterations; 12 to 15 by default), each
 * iteration two block matrix-vector products over the grid and the
 * vector updates and dot products as separate sweeps, as Fortran loop
 * nests are. So each step writes the whole matrix once (a large range,
 * written and then only read) and streams through it twice an iteration,
 * and the solver's vectors are rewritten every iteration. SPEC's grid is
 * far larger and its run far longer; the default here, 32x32x32 for 3
 * steps, is about 57 MB (46 MB of matrix) and 3 G instructions. The
 * initial step in pressure and density is smoothed over about a cell.
 * Each step prints the residual, the iterations and the norm of dq, as
 * SPEC's version reports its residual and dq; the end prints the mean
 * density and energy (conserved) and a hash of the flow. Written for
 * spmsim's suite (configs/suite/spec-upstream.toml); usage:
 * bwaves [NX [NY [NZ [STEPS]]]], by default 32 32 32 3. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NV 5         /* conserved variables a point */
#define NB (NV * NV) /* entries of a block */

static const double gas_gamma = 1.4, reynolds = 1e5, prandtl = 0.72, cfl = 2.0;
static const double tolerance = 1e-6;
static const int max_iterations = 60;

static int nx, ny, nz;
static long cells;
static double hx, hy, hz; /* grid spacing: the periodic cube is 1 on a side */

/* q(5,nx,ny,nz): the flow; dq: its correction this step; rhs: minus the
 * residual. The matrix: a (the point's own block), axp, axm, ayp, aym,
 * azp, azm (the neighbours' at +-1 in i, j, k), each a(5,5,nx,ny,nz),
 * row index fastest. BiCGstab's vectors are the size of q. */
static double *q, *dq, *rhs;
static double *a, *axp, *axm, *ayp, *aym, *azp, *azm;
static double *res, *res0, *pdir, *vvec, *svec, *tvec;

typedef struct {
    double rho, vel[3], energy, pres, sound, enthalpy, kinetic;
} State;

static long point(int i, int j, int k) {
    return i + (long)nx * (j + (long)ny * k);
}

static void *grid_array(size_t per_point) {
    double *p = malloc(sizeof(double) * per_point * cells);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void state_of(const double *qp, State *s) {
    s->rho = qp[0];
    double inv = 1.0 / qp[0];
    s->vel[0] = qp[1] * inv;
    s->vel[1] = qp[2] * inv;
    s->vel[2] = qp[3] * inv;
    s->energy = qp[4];
    s->kinetic = 0.5 * (s->vel[0] * s->vel[0] + s->vel[1] * s->vel[1] + s->vel[2] * s->vel[2]);
    s->pres = (gas_gamma - 1.0) * (qp[4] - s->rho * s->kinetic);
    s->sound = sqrt(gas_gamma * s->pres * inv);
    s->enthalpy = (qp[4] + s->pres) * inv;
}

/* The inviscid flux through a face normal to axis d. */
static void flux(const State *s, int d, double f[NV]) {
    double un = s->vel[d];
    f[0] = s->rho * un;
    for (int n = 0; n < 3; n++) f[1 + n] = s->rho * s->vel[n] * un;
    f[1 + d] += s->pres;
    f[4] = (s->energy + s->pres) * un;
}

/* Its Jacobian with respect to q, jac[row][column]. */
static void flux_jacobian(const State *s, int d, double jac[NV][NV]) {
    double g1 = gas_gamma - 1.0, un = s->vel[d], phi = g1 * s->kinetic;
    for (int m = 0; m < NV; m++) jac[0][m] = 0.0;
    jac[0][1 + d] = 1.0;
    for (int n = 0; n < 3; n++) {
        double normal = n == d ? 1.0 : 0.0;
        jac[1 + n][0] = phi * normal - s->vel[n] * un;
        for (int m = 0; m < 3; m++)
            jac[1 + n][1 + m] = s->vel[n] * (m == d ? 1.0 : 0.0) - g1 * normal * s->vel[m] + (m == n ? un : 0.0);
        jac[1 + n][4] = g1 * normal;
    }
    jac[4][0] = un * (phi - s->enthalpy);
    for (int m = 0; m < 3; m++) jac[4][1 + m] = s->enthalpy * (m == d ? 1.0 : 0.0) - g1 * un * s->vel[m];
    jac[4][4] = gas_gamma * un;
}

/* The viscous terms diffuse w = (0, u, v, w, kappa e + k) with the
 * coefficient 1/Re (e the internal energy a unit mass, k the kinetic,
 * kappa = gamma/Pr); visc_jacobian gives dw/dq. */
static double kappa_of(void) {
    return gas_gamma / prandtl;
}

static void diffused(const State *s, double w[NV]) {
    double e = s->energy / s->rho - s->kinetic;
    w[0] = 0.0;
    w[1] = s->vel[0];
    w[2] = s->vel[1];
    w[3] = s->vel[2];
    w[4] = kappa_of() * e + s->kinetic;
}

static void visc_jacobian(const State *s, double jac[NV][NV]) {
    double inv = 1.0 / s->rho, kappa = kappa_of(), v2 = 2.0 * s->kinetic;
    for (int m = 0; m < NV; m++) jac[0][m] = 0.0;
    for (int n = 0; n < 3; n++) {
        jac[1 + n][0] = -s->vel[n] * inv;
        for (int m = 0; m < 3; m++) jac[1 + n][1 + m] = m == n ? inv : 0.0;
        jac[1 + n][4] = 0.0;
    }
    /* de/dq = (-E/rho^2 + |V|^2/rho, -V/rho, 1/rho); dk/dq = (-|V|^2/rho, V/rho, 0) */
    jac[4][0] = kappa * (-s->energy * inv * inv + v2 * inv) - v2 * inv;
    for (int m = 0; m < 3; m++) jac[4][1 + m] = (1.0 - kappa) * s->vel[m] * inv;
    jac[4][4] = kappa * inv;
}

/* The high pressure and density ball at the cube's centre, radius 0.2,
 * its edge smoothed over about a cell; the gas at rest. */
static void initial_flow(void) {
    double h = hx > hy ? (hx > hz ? hx : hz) : (hy > hz ? hy : hz);
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                double x = (i + 0.5) * hx - 0.5, y = (j + 0.5) * hy - 0.5, z = (k + 0.5) * hz - 0.5;
                double r = sqrt(x * x + y * y + z * z);
                double inside = 0.5 * (1.0 - tanh((r - 0.2) / h));
                double rho = 0.125 + (1.0 - 0.125) * inside, pres = 0.1 + (1.0 - 0.1) * inside;
                double *qp = &q[NV * point(i, j, k)];
                qp[0] = rho;
                qp[1] = qp[2] = qp[3] = 0.0;
                qp[4] = pres / (gas_gamma - 1.0);
            }
}

/* The implicit step at the CFL number: dt * max(sum over axes of
 * (|u_d| + c) / h_d) = cfl. */
static double time_step(void) {
    double fastest = 0.0;
    for (long c = 0; c < cells; c++) {
        State s;
        state_of(&q[NV * c], &s);
        double rate = (fabs(s.vel[0]) + s.sound) / hx + (fabs(s.vel[1]) + s.sound) / hy +
                      (fabs(s.vel[2]) + s.sound) / hz;
        if (rate > fastest) fastest = rate;
    }
    return cfl / fastest;
}

/* The point's 6 neighbours on the periodic grid: xp, xm, yp, ym, zp, zm. */
static void neighbours(int i, int j, int k, long nb[6]) {
    int ip = i + 1 == nx ? 0 : i + 1, im = i == 0 ? nx - 1 : i - 1;
    int jp = j + 1 == ny ? 0 : j + 1, jm = j == 0 ? ny - 1 : j - 1;
    int kp = k + 1 == nz ? 0 : k + 1, km = k == 0 ? nz - 1 : k - 1;
    nb[0] = point(ip, j, k);
    nb[1] = point(im, j, k);
    nb[2] = point(i, jp, k);
    nb[3] = point(i, jm, k);
    nb[4] = point(i, j, kp);
    nb[5] = point(i, j, km);
}

/* rhs = -R(q), R the flux divergence minus the viscous terms; returns
 * the L2 norm of R over the grid. */
static double compute_rhs(void) {
    const double spacing[3] = {hx, hy, hz}, nu = 1.0 / reynolds;
    double sum = 0.0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                long c = point(i, j, k), nb[6];
                neighbours(i, j, k, nb);
                State sc, sp, sm;
                state_of(&q[NV * c], &sc);
                double fc[NV], fp[NV], fm[NV], wc[NV], wp[NV], wm[NV], r[NV] = {0, 0, 0, 0, 0};
                diffused(&sc, wc);
                for (int d = 0; d < 3; d++) {
                    const double *qp = &q[NV * nb[2 * d]], *qm = &q[NV * nb[2 * d + 1]], *qc = &q[NV * c];
                    state_of(qp, &sp);
                    state_of(qm, &sm);
                    flux(&sc, d, fc);
                    flux(&sp, d, fp);
                    flux(&sm, d, fm);
                    diffused(&sp, wp);
                    diffused(&sm, wm);
                    double lc = fabs(sc.vel[d]) + sc.sound, lp = fabs(sp.vel[d]) + sp.sound,
                           lm = fabs(sm.vel[d]) + sm.sound;
                    double lplus = lc > lp ? lc : lp, lminus = lc > lm ? lc : lm;
                    double inv_h = 1.0 / spacing[d], visc = nu * inv_h * inv_h;
                    for (int l = 0; l < NV; l++) {
                        double face_plus = 0.5 * (fc[l] + fp[l]) - 0.5 * lplus * (qp[l] - qc[l]);
                        double face_minus = 0.5 * (fm[l] + fc[l]) - 0.5 * lminus * (qc[l] - qm[l]);
                        r[l] += (face_plus - face_minus) * inv_h - visc * (wp[l] - 2.0 * wc[l] + wm[l]);
                    }
                }
                for (int l = 0; l < NV; l++) {
                    rhs[NV * c + l] = -r[l];
                    sum += r[l] * r[l];
                }
            }
    return sqrt(sum);
}

/* Stores b[row][column] into the block at base, row index fastest. */
static void store_block(double *base, double b[NV][NV]) {
    for (int m = 0; m < NV; m++)
        for (int l = 0; l < NV; l++) base[l + NV * m] = b[l][m];
}

/* The matrix I/dt + dR/dq, block by block. */
static void assemble(double dt) {
    const double spacing[3] = {hx, hy, hz}, nu = 1.0 / reynolds;
    double *const plus[3] = {axp, ayp, azp}, *const minus[3] = {axm, aym, azm};
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                long c = point(i, j, k), nb[6];
                neighbours(i, j, k, nb);
                State sc, sp, sm;
                state_of(&q[NV * c], &sc);
                double diag[NV][NV], vc[NV][NV], jac[NV][NV], vn[NV][NV], blk[NV][NV];
                visc_jacobian(&sc, vc);
                double visc_sum = 0.0, wave_sum = 0.0;
                for (int d = 0; d < 3; d++) {
                    state_of(&q[NV * nb[2 * d]], &sp);
                    state_of(&q[NV * nb[2 * d + 1]], &sm);
                    double lc = fabs(sc.vel[d]) + sc.sound, lp = fabs(sp.vel[d]) + sp.sound,
                           lm = fabs(sm.vel[d]) + sm.sound;
                    double lplus = lc > lp ? lc : lp, lminus = lc > lm ? lc : lm;
                    double inv_h = 1.0 / spacing[d], visc = nu * inv_h * inv_h;
                    /* The neighbour at +1: 0.5 (A - lambda I) / h - nu / h^2 dw/dq. */
                    flux_jacobian(&sp, d, jac);
                    visc_jacobian(&sp, vn);
                    for (int l = 0; l < NV; l++)
                        for (int m = 0; m < NV; m++)
                            blk[l][m] = 0.5 * inv_h * (jac[l][m] - (l == m ? lplus : 0.0)) - visc * vn[l][m];
                    store_block(&plus[d][NB * c], blk);
                    /* The neighbour at -1: -0.5 (A + lambda I) / h - nu / h^2 dw/dq. */
                    flux_jacobian(&sm, d, jac);
                    visc_jacobian(&sm, vn);
                    for (int l = 0; l < NV; l++)
                        for (int m = 0; m < NV; m++)
                            blk[l][m] = -0.5 * inv_h * (jac[l][m] + (l == m ? lminus : 0.0)) - visc * vn[l][m];
                    store_block(&minus[d][NB * c], blk);
                    wave_sum += 0.5 * (lplus + lminus) * inv_h;
                    visc_sum += 2.0 * visc;
                }
                /* The point's own: the central fluxes cancel, the dissipation and
                 * the viscous terms stay. */
                for (int l = 0; l < NV; l++)
                    for (int m = 0; m < NV; m++)
                        diag[l][m] = (l == m ? 1.0 / dt + wave_sum : 0.0) + visc_sum * vc[l][m];
                store_block(&a[NB * c], diag);
            }
}

/* y = A x over the whole grid. */
static void mat_times_vec(const double *x, double *y) {
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                long c = point(i, j, k), nb[6];
                neighbours(i, j, k, nb);
                /* Column by column, as the blocks are stored: y(l) += a(l,m) x(m). */
                const double *blk[7] = {&a[NB * c],   &axp[NB * c], &axm[NB * c], &ayp[NB * c],
                                        &aym[NB * c], &azp[NB * c], &azm[NB * c]};
                const double *xv[7] = {&x[NV * c],     &x[NV * nb[0]], &x[NV * nb[1]], &x[NV * nb[2]],
                                       &x[NV * nb[3]], &x[NV * nb[4]], &x[NV * nb[5]]};
                double y0 = 0.0, y1 = 0.0, y2 = 0.0, y3 = 0.0, y4 = 0.0;
                for (int b = 0; b < 7; b++) {
                    const double *col = blk[b];
                    for (int m = 0; m < NV; m++, col += NV) {
                        double xm = xv[b][m];
                        y0 += col[0] * xm;
                        y1 += col[1] * xm;
                        y2 += col[2] * xm;
                        y3 += col[3] * xm;
                        y4 += col[4] * xm;
                    }
                }
                double *yc = &y[NV * c];
                yc[0] = y0;
                yc[1] = y1;
                yc[2] = y2;
                yc[3] = y3;
                yc[4] = y4;
            }
}

static double dot(const double *x, const double *y) {
    double sum = 0.0;
    for (long n = 0; n < NV * cells; n++) sum += x[n] * y[n];
    return sum;
}

/* BiCGstab for A dq = rhs from dq = 0; returns the iterations and the
 * final relative residual in *relative. */
static int bicgstab(double *relative) {
    long n = NV * cells;
    memset(dq, 0, sizeof(double) * n);
    memcpy(res, rhs, sizeof(double) * n);
    memcpy(res0, rhs, sizeof(double) * n);
    memset(pdir, 0, sizeof(double) * n);
    memset(vvec, 0, sizeof(double) * n);
    double norm_b = sqrt(dot(rhs, rhs)), rho_old = 1.0, alpha = 1.0, omega = 1.0;
    *relative = 1.0;
    if (norm_b == 0.0) {
        *relative = 0.0;
        return 0;
    }
    int it;
    for (it = 1; it <= max_iterations; it++) {
        double rho_new = dot(res0, res);
        if (rho_new == 0.0) break;
        double beta = (rho_new / rho_old) * (alpha / omega);
        for (long e = 0; e < n; e++) pdir[e] = res[e] + beta * (pdir[e] - omega * vvec[e]);
        mat_times_vec(pdir, vvec);
        alpha = rho_new / dot(res0, vvec);
        for (long e = 0; e < n; e++) svec[e] = res[e] - alpha * vvec[e];
        mat_times_vec(svec, tvec);
        double tt = dot(tvec, tvec);
        omega = tt > 0.0 ? dot(tvec, svec) / tt : 0.0;
        for (long e = 0; e < n; e++) dq[e] += alpha * pdir[e] + omega * svec[e];
        for (long e = 0; e < n; e++) res[e] = svec[e] - omega * tvec[e];
        rho_old = rho_new;
        *relative = sqrt(dot(res, res)) / norm_b;
        if (*relative < tolerance || omega == 0.0) break;
    }
    return it > max_iterations ? max_iterations : it;
}

int main(int argc, char **argv) {
    nx = argc > 1 ? atoi(argv[1]) : 32;
    ny = argc > 2 ? atoi(argv[2]) : 32;
    nz = argc > 3 ? atoi(argv[3]) : 32;
    int steps = argc > 4 ? atoi(argv[4]) : 3;
    if (argc > 5 || nx < 4 || ny < 4 || nz < 4 || (long)nx * ny * nz > 1L << 24 || steps < 0) {
        fprintf(stderr, "usage: %s [NX [NY [NZ [STEPS]]]]: sides at least 4 (at most 2^24 points), "
                        "STEPS not negative\n", argv[0]);
        return 2;
    }
    cells = (long)nx * ny * nz;
    hx = 1.0 / nx;
    hy = 1.0 / ny;
    hz = 1.0 / nz;
    q = grid_array(NV);
    dq = grid_array(NV);
    rhs = grid_array(NV);
    a = grid_array(NB);
    axp = grid_array(NB);
    axm = grid_array(NB);
    ayp = grid_array(NB);
    aym = grid_array(NB);
    azp = grid_array(NB);
    azm = grid_array(NB);
    res = grid_array(NV);
    res0 = grid_array(NV);
    pdir = grid_array(NV);
    vvec = grid_array(NV);
    svec = grid_array(NV);
    tvec = grid_array(NV);
    initial_flow();
    printf("grid %dx%dx%d, %d steps, Re %g, Pr %g, CFL %g\n", nx, ny, nz, steps, reynolds, prandtl, cfl);
    long total_iterations = 0;
    double time = 0.0, dq_norm = 0.0;
    for (int step = 1; step <= steps; step++) {
        double dt = time_step();
        double residual = compute_rhs();
        assemble(dt);
        double relative;
        int iterations = bicgstab(&relative);
        total_iterations += iterations;
        double sum = 0.0;
        for (long e = 0; e < NV * cells; e++) {
            q[e] += dq[e];
            sum += dq[e] * dq[e];
        }
        dq_norm = sqrt(sum);
        for (long c = 0; c < cells; c++) {
            State s;
            state_of(&q[NV * c], &s);
            if (!(s.rho > 0.0 && s.pres > 0.0)) {
                fprintf(stderr, "step %d: density or pressure not positive at point %ld\n", step, c);
                return 1;
            }
        }
        time += dt;
        printf("step %3d  t %.6e  dt %.6e  residual %.10e  bicgstab %2d (%.3e)  |dq| %.10e\n", step, time, dt,
               residual, iterations, relative, dq_norm);
    }
    double mass = 0.0, energy = 0.0;
    unsigned long long hash = 1469598103934665603ULL;
    for (long c = 0; c < cells; c++) {
        mass += q[NV * c];
        energy += q[NV * c + 4];
        for (int l = 0; l < NV; l++) {
            unsigned long long bits;
            memcpy(&bits, &q[NV * c + l], sizeof bits);
            hash = (hash ^ bits ^ bits >> 29) * 1099511628211ULL;
        }
    }
    printf("iterations %ld, |dq| %.10e, mass %.12e, energy %.12e, flow hash %016llx\n", total_iterations, dq_norm,
           mass / cells, energy / cells, hash);
    return 0;
}
