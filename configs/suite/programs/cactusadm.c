/*
 * cactusadm.c - a stand-in for SPEC CPU2006 436.cactusADM, written from scratch.
 *
 * WHAT SPEC'S 436.cactusADM COMPUTES
 *   436.cactusADM is the Cactus framework (a C driver) running the BenchADM
 *   kernel (Fortran).  It evolves Einstein's equations of general relativity
 *   in vacuum in the ADM (Arnowitt-Deser-Misner, "3+1") form: space is a 3-D
 *   Cartesian grid, and the unknowns are the spatial metric g_ij and the
 *   extrinsic curvature K_ij (symmetric 3x3 tensors, six grid functions
 *   each), plus the lapse alpha (shift zero in the benchmark).  Each grid
 *   function is its own 3-D array, with ghost zones and past/future time
 *   levels managed by the framework.  Time integration is a staggered
 *   leapfrog (metric on integer steps, curvature on half steps).  Each step
 *   sweeps the grid point by point and, at every point, evaluates a very long
 *   straight-line block of floating-point code: second-order centred finite
 *   differences of the metric, the inverse metric, the Christoffel symbols,
 *   the Ricci tensor and the right-hand sides of the evolution equations.
 *   The reference problem is a small perturbation of flat space on a modest
 *   3-D grid evolved for a fixed number of iterations; the run is dominated
 *   by that kernel, which streams some tens of grid functions through the
 *   cache with a 3-D (27-point) stencil.
 *
 * WHAT THIS PROGRAM DOES
 *   The same kind of computation, written independently:
 *   - vacuum ADM equations with zero shift (beta^i = 0):
 *       d_t g_ij  = -2 alpha K_ij
 *       d_t K_ij  = -D_i D_j alpha + alpha (R_ij + K K_ij - 2 K_ik K^k_j)
 *     with 1+log slicing  d_t alpha = -2 alpha K  (K = g^ij K_ij);
 *   - the full nonlinear Ricci tensor at every point,
 *       R_ij = 1/2 g^kl (d_k d_j g_il + d_i d_l g_kj - d_k d_l g_ij - d_i d_j g_kl)
 *            + g^kl (Gamma^m_il Gamma_mkj - Gamma^m_ij Gamma_mkl),
 *     from second-order centred differences (including mixed second
 *     derivatives, so the stencil touches 19 points of the 27-point cube),
 *     inlined and fully unrolled in one sweep (about 2,950 instructions per
 *     grid point per step);
 *   - a staggered leapfrog: g and alpha at integer steps, K at half steps;
 *     K^n, needed in the terms quadratic in K, is extrapolated from the
 *     two previous half steps, so the scheme is second order in time;
 *   - 26 separate 3-D arrays of doubles with one ghost layer: g_ij (6) and
 *     alpha at two integer time levels (read one, write the other), K_ij (6)
 *     at two half time levels (the new level overwrites the oldest);
 *   - periodic boundaries (ghost layers copied from the opposite face);
 *   - initial data: a linearised transverse-traceless gravitational plane
 *     wave, h_ij = A e+_ij sin(k.x - |k| t), k = 2 pi (1,1,2), A = 1e-5, on
 *     the periodic unit cube, with K at t = -dt/2 and -3dt/2 taken from the
 *     same solution; Courant factor dt/h = 0.25;
 *   - diagnostics every few steps: the L2 norm of the Hamiltonian constraint
 *     H = R + K^2 - K_ij K^ij, max |g_xx - 1|, and the phase and amplitude of
 *     the wave's Fourier mode (its phase gives the propagation speed); at the
 *     end an FNV-1a hash of the bytes of the final g, K and alpha arrays.
 *
 * WHAT IT SIMPLIFIES (relative to Cactus/BenchADM)
 *   No framework (parameter files, scheduler, I/O, checkpointing), no shift,
 *   one slicing (1+log) instead of a choice, periodic instead of other outer
 *   boundaries, a single analytic initial-data set, no matter terms, no
 *   momentum-constraint output, and the Ricci computation is written with
 *   compiler-unrolled index loops rather than generated straight-line code.
 *
 * CHECKS (see the report that came with this file)
 *   ||H||_2 and the wave-speed error both fall by about 4 when the grid is
 *   refined by 2 (N = 16, 32, 64 at T = 0.3125), i.e. second-order
 *   convergence, and the measured speed tends to 1 (the speed of light).
 *   A 400-step run at N = 32 (about 7.7 wave periods) stays stable.
 *
 * DEFAULT SIZE
 *   N = 52 (52^3 grid), 6 steps: about 2.9e9 instructions (counted with
 *   valgrind --tool=lackey, since perf counters were unavailable), about
 *   34 MB maximum resident set (26 arrays x 54^3 doubles = 32.8 MB).
 *
 * USAGE
 *   cactusadm [N [STEPS]]      N^3 grid points, STEPS time steps
 *   build: gcc -O2 -o cactusadm cactusadm.c -lm
 *
 * Written for spmsim's suite (configs/suite/spec-upstream.toml)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>

/* ---- grid ------------------------------------------------------------ */
static int N;            /* interior points per dimension               */
static int M;            /* N + 2 (one ghost layer on each side)        */
static size_t SY, SZ;    /* strides in y and z (x stride is 1)          */
static size_t NTOT;      /* M^3                                          */
#define IDX(i, j, k) ((size_t)(i) + SY * (size_t)(j) + SZ * (size_t)(k))

/* symmetric 3x3 tensor stored as 6 components xx,xy,xz,yy,yz,zz */
enum { XX, XY, XZ, YY, YZ, ZZ };
static const int S[3][3] = { { XX, XY, XZ }, { XY, YY, YZ }, { XZ, YZ, ZZ } };
static const int CI[6] = { 0, 0, 0, 1, 1, 2 };
static const int CJ[6] = { 0, 1, 2, 1, 2, 2 };
/* weight of a component in a full contraction A^ij B_ij (off-diagonals twice) */
static const double W[6] = { 1, 2, 2, 1, 2, 1 };

static double *xmalloc(size_t n)
{
    double *p = malloc(n * sizeof(double));
    if (!p) { fprintf(stderr, "cactusadm: out of memory\n"); exit(1); }
    return p;
}

/* Periodic boundaries: copy the opposite interior face into each ghost
 * layer, x first, then y (including x ghosts), then z (including x and y
 * ghosts), so edges and corners used by the mixed derivatives are filled. */
static void sync_periodic(double *f)
{
    for (int k = 1; k <= N; k++)
        for (int j = 1; j <= N; j++) {
            f[IDX(0, j, k)] = f[IDX(N, j, k)];
            f[IDX(N + 1, j, k)] = f[IDX(1, j, k)];
        }
    for (int k = 1; k <= N; k++) {
        memcpy(&f[IDX(0, 0, k)], &f[IDX(0, N, k)], (size_t)M * sizeof(double));
        memcpy(&f[IDX(0, N + 1, k)], &f[IDX(0, 1, k)], (size_t)M * sizeof(double));
    }
    memcpy(&f[IDX(0, 0, 0)], &f[IDX(0, 0, N)], SZ * sizeof(double));
    memcpy(&f[IDX(0, 0, N + 1)], &f[IDX(0, 0, 1)], SZ * sizeof(double));
}

/* ---- the ADM kernel ---------------------------------------------------
 * One sweep over the grid.  At every point, from the metric g^n and lapse
 * alpha^n (with ghost zones) and the extrinsic curvature at the two previous
 * half steps K^{n-1/2}, K^{n-3/2}, compute
 *   - first and second centred differences of g_ij and alpha        (O(h^2))
 *   - the inverse metric g^ij (cofactors / determinant)
 *   - Christoffel symbols  Gamma_kij = (d_i g_kj + d_j g_ki - d_k g_ij)/2,
 *                          Gamma^k_ij = g^kl Gamma_lij
 *   - the Ricci tensor
 *       R_ij = 1/2 g^kl (d_k d_j g_il + d_i d_l g_kj - d_k d_l g_ij - d_i d_j g_kl)
 *            + g^kl (Gamma^m_il Gamma_mkj - Gamma^m_ij Gamma_mkl)
 *   - D_i D_j alpha = d_i d_j alpha - Gamma^k_ij d_k alpha
 *   - the vacuum ADM evolution equation with zero shift
 *       d_t K_ij = -D_i D_j alpha + alpha (R_ij + K K_ij - 2 K_ik K^k_j)
 * and advance K by the staggered leapfrog
 *       K^{n+1/2} = K^{n-1/2} + dt * (d_t K_ij)|_n ,
 * with K^n = (3 K^{n-1/2} - K^{n-3/2}) / 2 (second-order extrapolation)
 * used in the terms quadratic in K.  K^{n+1/2} overwrites K^{n-3/2} point by
 * point (the right-hand side needs K only at the same point).
 * If hsum is non-NULL, also accumulate the square of the Hamiltonian
 * constraint  H = R + K^2 - K_ij K^ij  at time level n.
 * If update == 0, only the diagnostic is computed. */
static void adm_sweep(double *const G[6], const double *A, double *const Kc[6],
                      double *const Ko[6], double dt, double h, int update,
                      double *hsum)
{
    const double i2h = 1.0 / (2.0 * h), ih2 = 1.0 / (h * h), i4h2 = 1.0 / (4.0 * h * h);
    const size_t sy = SY, sz = SZ;
    double hs = 0.0;

    for (int k = 1; k <= N; k++)
        for (int j = 1; j <= N; j++) {
            const size_t p0 = IDX(1, j, k);
            for (int i = 0; i < N; i++) {
                const size_t p = p0 + (size_t)i;
                double g[6], dg[6][3], ddg[6][6], gu[6];
                double Gl[3][6], Gu[3][6], R[6], Kn[6], Km[3][3];

                /* centred differences of the metric, O(h^2) */
#pragma GCC unroll 6
                for (int c = 0; c < 6; c++) {
                    const double *f = G[c];
                    const double f0 = f[p];
                    g[c] = f0;
                    dg[c][0] = (f[p + 1] - f[p - 1]) * i2h;
                    dg[c][1] = (f[p + sy] - f[p - sy]) * i2h;
                    dg[c][2] = (f[p + sz] - f[p - sz]) * i2h;
                    ddg[c][XX] = (f[p + 1] - 2.0 * f0 + f[p - 1]) * ih2;
                    ddg[c][YY] = (f[p + sy] - 2.0 * f0 + f[p - sy]) * ih2;
                    ddg[c][ZZ] = (f[p + sz] - 2.0 * f0 + f[p - sz]) * ih2;
                    ddg[c][XY] = (f[p + 1 + sy] - f[p + 1 - sy] - f[p - 1 + sy] + f[p - 1 - sy]) * i4h2;
                    ddg[c][XZ] = (f[p + 1 + sz] - f[p + 1 - sz] - f[p - 1 + sz] + f[p - 1 - sz]) * i4h2;
                    ddg[c][YZ] = (f[p + sy + sz] - f[p + sy - sz] - f[p - sy + sz] + f[p - sy - sz]) * i4h2;
                }

                /* inverse metric g^ij = cofactor(g)_ij / det g */
                {
                    const double cxx = g[YY] * g[ZZ] - g[YZ] * g[YZ];
                    const double cxy = g[XZ] * g[YZ] - g[XY] * g[ZZ];
                    const double cxz = g[XY] * g[YZ] - g[XZ] * g[YY];
                    const double det = g[XX] * cxx + g[XY] * cxy + g[XZ] * cxz;
                    const double id = 1.0 / det;
                    gu[XX] = cxx * id;
                    gu[XY] = cxy * id;
                    gu[XZ] = cxz * id;
                    gu[YY] = (g[XX] * g[ZZ] - g[XZ] * g[XZ]) * id;
                    gu[YZ] = (g[XY] * g[XZ] - g[XX] * g[YZ]) * id;
                    gu[ZZ] = (g[XX] * g[YY] - g[XY] * g[XY]) * id;
                }

                /* Christoffel symbols of the first kind, Gamma_a bc */
#pragma GCC unroll 3
                for (int a = 0; a < 3; a++)
#pragma GCC unroll 6
                    for (int c = 0; c < 6; c++) {
                        const int b = CI[c], d = CJ[c];
                        Gl[a][c] = 0.5 * (dg[S[a][b]][d] + dg[S[a][d]][b] - dg[c][a]);
                    }
                /* ... and of the second kind, Gamma^a_bc = g^am Gamma_mbc */
#pragma GCC unroll 3
                for (int a = 0; a < 3; a++)
#pragma GCC unroll 6
                    for (int c = 0; c < 6; c++)
                        Gu[a][c] = gu[S[a][0]] * Gl[0][c] + gu[S[a][1]] * Gl[1][c]
                                 + gu[S[a][2]] * Gl[2][c];

                /* Ricci tensor (formula above), fully unrolled */
#pragma GCC unroll 6
                for (int c = 0; c < 6; c++) {
                    const int ii = CI[c], jj = CJ[c];
                    double r = 0.0;
#pragma GCC unroll 3
                    for (int kk = 0; kk < 3; kk++)
#pragma GCC unroll 3
                        for (int ll = 0; ll < 3; ll++) {
                            const int il = S[ii][ll], kj = S[kk][jj], kl = S[kk][ll];
                            double t = 0.5 * (ddg[il][kj] + ddg[kj][il] - ddg[c][kl] - ddg[kl][c]);
#pragma GCC unroll 3
                            for (int m = 0; m < 3; m++)
                                t += Gu[m][il] * Gl[m][kj] - Gu[m][c] * Gl[m][kl];
                            r += gu[kl] * t;
                        }
                    R[c] = r;
                }

                /* lapse: derivatives and D_i D_j alpha = d_i d_j alpha - Gamma^k_ij d_k alpha */
                const double a0 = A[p];
                const double da0 = (A[p + 1] - A[p - 1]) * i2h;
                const double da1 = (A[p + sy] - A[p - sy]) * i2h;
                const double da2 = (A[p + sz] - A[p - sz]) * i2h;
                double dda[6];
                dda[XX] = (A[p + 1] - 2.0 * a0 + A[p - 1]) * ih2;
                dda[YY] = (A[p + sy] - 2.0 * a0 + A[p - sy]) * ih2;
                dda[ZZ] = (A[p + sz] - 2.0 * a0 + A[p - sz]) * ih2;
                dda[XY] = (A[p + 1 + sy] - A[p + 1 - sy] - A[p - 1 + sy] + A[p - 1 - sy]) * i4h2;
                dda[XZ] = (A[p + 1 + sz] - A[p + 1 - sz] - A[p - 1 + sz] + A[p - 1 - sz]) * i4h2;
                dda[YZ] = (A[p + sy + sz] - A[p + sy - sz] - A[p - sy + sz] + A[p - sy - sz]) * i4h2;

                /* K_ij at time level n, its trace K = g^ij K_ij and K^a_b = g^al K_lb */
                double trK = 0.0;
#pragma GCC unroll 6
                for (int c = 0; c < 6; c++) {
                    Kn[c] = 1.5 * Kc[c][p] - 0.5 * Ko[c][p];
                    trK += W[c] * gu[c] * Kn[c];
                }
#pragma GCC unroll 3
                for (int a = 0; a < 3; a++)
#pragma GCC unroll 3
                    for (int b = 0; b < 3; b++)
                        Km[a][b] = gu[S[a][0]] * Kn[S[0][b]] + gu[S[a][1]] * Kn[S[1][b]]
                                 + gu[S[a][2]] * Kn[S[2][b]];

                if (update) {
                    /* d_t K_ij = -D_i D_j alpha + alpha (R_ij + K K_ij - 2 K_ik K^k_j) */
#pragma GCC unroll 6
                    for (int c = 0; c < 6; c++) {
                        const int ii = CI[c], jj = CJ[c];
                        const double DDa = dda[c] - (Gu[0][c] * da0 + Gu[1][c] * da1 + Gu[2][c] * da2);
                        const double KK = Kn[S[ii][0]] * Km[0][jj] + Kn[S[ii][1]] * Km[1][jj]
                                        + Kn[S[ii][2]] * Km[2][jj];
                        const double rhs = -DDa + a0 * (R[c] + trK * Kn[c] - 2.0 * KK);
                        Ko[c][p] = Kc[c][p] + dt * rhs;   /* K^{n+1/2} */
                    }
                }
                if (hsum) {
                    /* Hamiltonian constraint H = R + K^2 - K_ij K^ij */
                    double Rs = 0.0;
#pragma GCC unroll 6
                    for (int c = 0; c < 6; c++) Rs += W[c] * gu[c] * R[c];
                    double KijKij = 0.0;
#pragma GCC unroll 3
                    for (int a = 0; a < 3; a++)
#pragma GCC unroll 3
                        for (int b = 0; b < 3; b++) KijKij += Km[a][b] * Km[b][a];
                    const double H = Rs + trK * trK - KijKij;
                    hs += H * H;
                }
            }
        }
    if (hsum) *hsum = hs;
}

/* Second half of the staggered leapfrog (pointwise):
 *   d_t g_ij = -2 alpha K_ij            ->  g^{n+1} = g^n - 2 dt alpha^{n+1/2} K^{n+1/2}
 *   d_t alpha = -2 alpha K  (1+log)     ->  alpha^{n+1} = alpha^n exp(-2 dt K^{n+1/2})
 * where K = g^ij K_ij uses g^{n+1/2} ~ g^n - dt alpha^n K^{n+1/2} and
 * alpha^{n+1/2} = alpha^n exp(-dt K^{n+1/2}).  Reads level n, writes level n+1. */
static void metric_update(double *const G[6], const double *A, double *const K[6],
                          double *const Gn[6], double *An, double dt)
{
    for (int k = 1; k <= N; k++)
        for (int j = 1; j <= N; j++) {
            const size_t p0 = IDX(1, j, k);
            for (int i = 0; i < N; i++) {
                const size_t p = p0 + (size_t)i;
                double g[6], Kh[6];
                const double a0 = A[p];
#pragma GCC unroll 6
                for (int c = 0; c < 6; c++) {
                    Kh[c] = K[c][p];
                    g[c] = G[c][p] - dt * a0 * Kh[c];      /* g^{n+1/2} */
                }
                const double cxx = g[YY] * g[ZZ] - g[YZ] * g[YZ];
                const double cxy = g[XZ] * g[YZ] - g[XY] * g[ZZ];
                const double cxz = g[XY] * g[YZ] - g[XZ] * g[YY];
                const double id = 1.0 / (g[XX] * cxx + g[XY] * cxy + g[XZ] * cxz);
                const double trK = (cxx * Kh[XX] + 2.0 * cxy * Kh[XY] + 2.0 * cxz * Kh[XZ]
                    + (g[XX] * g[ZZ] - g[XZ] * g[XZ]) * Kh[YY]
                    + 2.0 * (g[XY] * g[XZ] - g[XX] * g[YZ]) * Kh[YZ]
                    + (g[XX] * g[YY] - g[XY] * g[XY]) * Kh[ZZ]) * id;
                const double e = exp(-dt * trK);
                const double ah = a0 * e;                 /* alpha^{n+1/2} */
                An[p] = ah * e;                           /* alpha^{n+1}   */
#pragma GCC unroll 6
                for (int c = 0; c < 6; c++)
                    Gn[c][p] = G[c][p] - 2.0 * dt * ah * Kh[c];
            }
        }
    for (int c = 0; c < 6; c++) sync_periodic(Gn[c]);
    sync_periodic(An);
}

/* ---- initial data: linearised TT plane wave -----------------------------
 * h_ij = Amp e+_ij sin(k.x - w t), w = |k|, k = 2 pi (MX, MY, MZ), e+ = e1 e1 - e2 e2
 * with e1, e2 orthonormal and transverse to k (so h is transverse-traceless).
 * With alpha = 1, zero shift:  g_ij = delta_ij + h_ij,
 * K_ij = -(1/2) d_t g_ij = (1/2) Amp w e+_ij cos(k.x - w t). */
#define MX 1
#define MY 1
#define MZ 2
#define AMP 1.0e-5
static double EP[6];       /* polarisation tensor e+_ij */
static double KVEC[3], OMEGA;

static void setup_wave(void)
{
    const double tp = 2.0 * M_PI;
    double n[3] = { MX, MY, MZ }, e1[3], e2[3];
    const double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int a = 0; a < 3; a++) { n[a] /= nn; KVEC[a] = tp * (a == 0 ? MX : a == 1 ? MY : MZ); }
    OMEGA = tp * nn;
    /* e1 = n x zhat normalised, e2 = n x e1 */
    e1[0] = n[1]; e1[1] = -n[0]; e1[2] = 0.0;
    const double l1 = sqrt(e1[0] * e1[0] + e1[1] * e1[1]);
    e1[0] /= l1; e1[1] /= l1;
    e2[0] = n[1] * e1[2] - n[2] * e1[1];
    e2[1] = n[2] * e1[0] - n[0] * e1[2];
    e2[2] = n[0] * e1[1] - n[1] * e1[0];
    for (int c = 0; c < 6; c++) EP[c] = e1[CI[c]] * e1[CJ[c]] - e2[CI[c]] * e2[CJ[c]];
}

static void init_fields(double *const G[6], double *A, double *const Kc[6],
                        double *const Ko[6], double h, double dt)
{
    for (int k = 1; k <= N; k++)
        for (int j = 1; j <= N; j++)
            for (int i = 1; i <= N; i++) {
                const size_t p = IDX(i, j, k);
                const double ph = KVEC[0] * (i - 1) * h + KVEC[1] * (j - 1) * h + KVEC[2] * (k - 1) * h;
                const double s0 = sin(ph);
                const double c1 = cos(ph + OMEGA * 0.5 * dt);   /* t = -dt/2   */
                const double c3 = cos(ph + OMEGA * 1.5 * dt);   /* t = -3dt/2  */
                for (int c = 0; c < 6; c++) {
                    const double delta = (c == XX || c == YY || c == ZZ) ? 1.0 : 0.0;
                    G[c][p] = delta + AMP * EP[c] * s0;
                    Kc[c][p] = 0.5 * AMP * OMEGA * EP[c] * c1;
                    Ko[c][p] = 0.5 * AMP * OMEGA * EP[c] * c3;
                }
                A[p] = 1.0;
            }
    for (int c = 0; c < 6; c++) { sync_periodic(G[c]); sync_periodic(Kc[c]); sync_periodic(Ko[c]); }
    sync_periodic(A);
}

/* Diagnostics on the metric: max |g_xx - 1| and the complex amplitude of the
 * wave's Fourier mode, c = sum (e+ : h) exp(-i k.x).  For h = Amp e+ sin(k.x - phi)
 * this is c = -(Amp (e+:e+) N^3 / 2) (sin phi + i cos phi), so phi = atan2(-Re c, -Im c). */
static void metric_diag(double *const G[6], double h, double *maxdev, double *phase, double *amp)
{
    double mx = 0.0, cr = 0.0, ci = 0.0, ee = 0.0;
    double *tab = xmalloc(6 * (size_t)N);   /* cos/sin of k_a x_a per axis: separable e^{-ik.x} */
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < N; i++) {
            tab[(2 * a) * N + i] = cos(KVEC[a] * i * h);
            tab[(2 * a + 1) * N + i] = sin(KVEC[a] * i * h);
        }
    for (int c = 0; c < 6; c++) ee += W[c] * EP[c] * EP[c];
    for (int k = 1; k <= N; k++)
        for (int j = 1; j <= N; j++) {
            /* e^{i(k_y y + k_z z)} */
            const double cy = tab[2 * N + j - 1], sy = tab[3 * N + j - 1];
            const double cz = tab[4 * N + k - 1], sz = tab[5 * N + k - 1];
            const double cyz = cy * cz - sy * sz, syz = sy * cz + cy * sz;
            for (int i = 1; i <= N; i++) {
                const size_t p = IDX(i, j, k);
                const double d = fabs(G[XX][p] - 1.0);
                if (d > mx) mx = d;
                const double proj = W[XX] * EP[XX] * (G[XX][p] - 1.0) + W[XY] * EP[XY] * G[XY][p]
                                  + W[XZ] * EP[XZ] * G[XZ][p] + W[YY] * EP[YY] * (G[YY][p] - 1.0)
                                  + W[YZ] * EP[YZ] * G[YZ][p] + W[ZZ] * EP[ZZ] * (G[ZZ][p] - 1.0);
                const double cx = tab[i - 1], sx = tab[N + i - 1];
                cr += proj * (cx * cyz - sx * syz);   /* Re e^{ik.x} = cos(k.x) */
                ci -= proj * (sx * cyz + cx * syz);   /* -Im: -sin(k.x)         */
            }
        }
    free(tab);
    *maxdev = mx;
    *phase = atan2(-cr, -ci);
    *amp = 2.0 * sqrt(cr * cr + ci * ci) / (ee * (double)N * N * N);
}

/* FNV-1a over the bytes of the interior of an array */
static uint64_t fnv_array(uint64_t hsh, const double *f)
{
    for (int k = 1; k <= N; k++)
        for (int j = 1; j <= N; j++) {
            const unsigned char *b = (const unsigned char *)&f[IDX(1, j, k)];
            for (size_t q = 0; q < (size_t)N * sizeof(double); q++) {
                hsh ^= b[q];
                hsh *= 1099511628211ULL;
            }
        }
    return hsh;
}

int main(int argc, char **argv)
{
    N = 52;
    int steps = 6;
    if (argc > 1) N = atoi(argv[1]);
    if (argc > 2) steps = atoi(argv[2]);
    if (N < 4 || steps < 1) {
        fprintf(stderr, "usage: %s [N [STEPS]]   (N >= 4, STEPS >= 1)\n", argv[0]);
        return 1;
    }
    M = N + 2;
    SY = (size_t)M;
    SZ = (size_t)M * (size_t)M;
    NTOT = SZ * (size_t)M;

    const double h = 1.0 / N;           /* periodic unit cube */
    const double dt = 0.25 * h;         /* Courant factor 0.25 */
    int every = steps / 10;               /* print about ten lines, at most every 2nd step */
    if (every < 2) every = 2;

    /* grid functions: g and alpha at two integer time levels, K at two half levels */
    double *G[2][6], *A[2], *K[2][6];
    for (int l = 0; l < 2; l++) {
        for (int c = 0; c < 6; c++) { G[l][c] = xmalloc(NTOT); K[l][c] = xmalloc(NTOT); }
        A[l] = xmalloc(NTOT);
    }
    for (int l = 0; l < 2; l++) {          /* ghosts of unused levels defined too */
        for (int c = 0; c < 6; c++) { memset(G[l][c], 0, NTOT * sizeof(double)); memset(K[l][c], 0, NTOT * sizeof(double)); }
        memset(A[l], 0, NTOT * sizeof(double));
    }

    setup_wave();
    printf("cactusadm: vacuum ADM, 1+log slicing, zero shift, staggered leapfrog\n");
    printf("grid %d^3 (periodic unit cube), h = %.6g, dt = %.6g, steps = %d, T = %.6g\n",
           N, h, dt, steps, steps * dt);
    printf("initial data: TT plane wave, k = 2pi(%d,%d,%d), amplitude %.1e\n", MX, MY, MZ, AMP);
    printf("memory: %d grid functions of %zu doubles = %.1f MB\n", 26, NTOT,
           26.0 * NTOT * sizeof(double) / 1e6);

    int gc = 0, kc = 0;                    /* current levels of g/alpha and of K */
    init_fields(G[gc], A[gc], K[kc], K[1 - kc], h, dt);

    double phase0 = 0.0, phase_prev = 0.0, unwrap = 0.0, hsum = 0.0;
    int last_n = 0;
    printf("%6s %10s %14s %14s %14s %12s\n", "step", "time", "||H||_2", "max|gxx-1|", "phase", "amplitude");
    for (int n = 0; n <= steps; n++) {
        const int diag = (n % every == 0) || (n == steps);
        /* Ricci sweep: K^{n+1/2} from g^n, alpha^n, K^{n-1/2}, K^{n-3/2} */
        adm_sweep(G[gc], A[gc], K[kc], K[1 - kc], dt, h, n < steps, diag ? &hsum : NULL);
        if (diag) {
            double md, ph, amp;
            metric_diag(G[gc], h, &md, &ph, &amp);
            if (n == 0) { phase0 = phase_prev = ph; unwrap = ph; }
            /* unwrap: of the 2 pi aliases take the advance closest to the
             * light-speed prediction w * (time since last print) */
            double dph = ph - phase_prev;
            const double pred = OMEGA * (n - last_n) * dt;
            dph -= 2.0 * M_PI * floor((dph - pred) / (2.0 * M_PI) + 0.5);
            unwrap += dph;
            last_n = n;
            phase_prev = ph;
            printf("%6d %10.6f %14.6e %14.6e %14.8f %12.6e\n", n, n * dt,
                   sqrt(hsum / ((double)N * N * N)), md, unwrap, amp);
        }
        if (n == steps) break;
        kc = 1 - kc;                       /* K[kc] now holds K^{n+1/2} */
        metric_update(G[gc], A[gc], K[kc], G[1 - gc], A[1 - gc], dt);
        gc = 1 - gc;
    }
    const double T = steps * dt;
    const double kmag = sqrt(KVEC[0] * KVEC[0] + KVEC[1] * KVEC[1] + KVEC[2] * KVEC[2]);
    printf("wave speed from phase: %.8f (exact 1; phase advanced %.6f rad in T = %.6g)\n",
           (unwrap - phase0) / (kmag * T), unwrap - phase0, T);

    /* checksum: hash of the final g, alpha (level n = steps) and K (level steps-1/2) */
    uint64_t hsh = 1469598103934665603ULL;
    double sg = 0.0, sk = 0.0;
    for (int c = 0; c < 6; c++) {
        hsh = fnv_array(hsh, G[gc][c]);
        hsh = fnv_array(hsh, K[kc][c]);
        for (int k = 1; k <= N; k++)
            for (int j = 1; j <= N; j++)
                for (int i = 1; i <= N; i++) {
                    sg += G[gc][c][IDX(i, j, k)];
                    sk += fabs(K[kc][c][IDX(i, j, k)]);
                }
    }
    hsh = fnv_array(hsh, A[gc]);
    printf("sum g = %.15e  sum |K| = %.15e\n", sg, sk);
    printf("checksum %016llx\n", (unsigned long long)hsh);

    for (int l = 0; l < 2; l++) {
        for (int c = 0; c < 6; c++) { free(G[l][c]); free(K[l][c]); }
        free(A[l]);
    }
    return 0;
}
