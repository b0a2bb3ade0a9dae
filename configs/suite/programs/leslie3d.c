/*
 * leslie3d.c -- a from-scratch stand-in for SPEC CPU2006 437.leslie3d
 *
 * WHAT SPEC'S 437.leslie3d COMPUTES (from SPEC's public descriptions of the
 * LESlie3d-derived benchmarks, e.g. MPI2007's 143.dleslie):
 *   LESlie3d ("Large-Eddy Simulations with Linear-Eddy Model in 3D") is a
 *   research CFD code from Georgia Tech (Computational Combustion Lab) for
 *   turbulent, compressible flows (mixing, combustion, acoustics).  SPEC's
 *   version is set up to solve a temporal mixing layer: two parallel streams
 *   moving in opposite directions relative to the layer, whose shear layer
 *   rolls up and thickens in time.  The code solves the filtered (LES)
 *   compressible Navier-Stokes equations with a transported subgrid kinetic
 *   energy closure, using a strongly conservative finite-volume MacCormack
 *   predictor-corrector scheme that is fourth-order accurate in space (the
 *   "2-4" MacCormack variant) and second-order in time, explicit.  It is a
 *   Fortran 90 code: as is usual for such codes, the flow variables live in
 *   large multi-dimensional arrays in column-major order, swept by triple
 *   loop nests one direction at a time, with separate arrays for fluxes,
 *   the predicted (intermediate) state and the corrected state.  The
 *   benchmark does very little I/O; it is dominated by streaming stencil
 *   sweeps over those arrays.
 *
 * WHAT THIS PROGRAM DOES:
 *   It integrates the 3-D compressible Navier-Stokes equations in
 *   conservative form -- density, three momenta, total energy -- plus a
 *   transported subgrid kinetic energy rho*k (one-equation eddy-viscosity
 *   model: nu_t = C_nu sqrt(k) Delta, production by the resolved strain,
 *   dissipation C_eps k^1.5 / Delta, gradient diffusion).  The total energy
 *   includes k, so the energy equation is purely in flux form and total
 *   energy is conserved exactly (to rounding).
 *   Discretisation: cell-centred finite volumes on a uniform Cartesian grid.
 *   Time integration is the 2-4 MacCormack predictor-corrector
 *   (Gottlieb-Turkel): the predictor uses the one-sided fourth-order face
 *   flux H(i+1/2) = (7F(i+1) - F(i+2))/6 ("forward") or
 *   H(i+1/2) = (7F(i) - F(i-1))/6 ("backward"), the corrector uses the
 *   opposite one, and the forward/backward choice per direction cycles
 *   through all 8 combinations over successive steps so that no bias
 *   accumulates.  Viscous and subgrid stresses, heat flux and k-diffusion
 *   are added to the node fluxes using central-difference gradients.
 *   The time step is CFL-limited (convective plus viscous limits).
 *   Problem: a temporal mixing layer, u = (dU/2) tanh(2y/delta_w) with
 *   convective Mach number 0.4, plus small deterministic perturbations
 *   (a few oblique Fourier modes with phases from a fixed-seed generator
 *   written here, plus low-level noise) concentrated in the layer.
 *   Boundaries: periodic in x (streamwise) and z (spanwise); slip
 *   adiabatic walls in y (cross-stream), imposed through zero mass, shear,
 *   energy and k fluxes at the wall faces (so mass, energy and x-momentum
 *   are conserved exactly) and mirror ghost cells for the interior stencils.
 *   Data layout: Fortran order (i fastest), 2 ghost layers in each
 *   direction; the state Q(i,j,k,n), the predicted state QS, the corrected
 *   state QN, the node fluxes F(i,j,k,n) of the current direction and the
 *   primitive arrays (u, v, w, p, T, k, mu_t) are all separate arrays, swept
 *   direction by direction as the Fortran original does.
 *
 * SIMPLIFICATIONS relative to LESlie3d: uniform Cartesian grid instead of
 *   general curvilinear metrics; no linear-eddy (LEM) scalar mixing model and
 *   no species/chemistry; constant molecular viscosity; simple slip walls
 *   instead of characteristic (non-reflecting) cross-stream boundaries; no
 *   restart or solution files; our own, smaller problem size and step count.
 *
 * DEFAULT SIZE: 64 x 64 x 48 cells (x streamwise, y cross-stream, z spanwise,
 *   spacing delta_w/4), 8 time steps (16 MacCormack stages).  31 arrays of
 *   68 x 68 x 52 doubles (with ghosts) = 56.9 MB; max RSS 57.7 MB.
 *   3.27 G user-mode instructions (valgrind --tool=lackey --basic-counts=yes
 *   on the default run, gcc 12.2 -O2, x86-64; hardware counters were not
 *   available to perf on the measuring machine), about 0.4 s of run time.
 *   Cost scales as cells x steps (about 2000 instructions per cell per step).
 *
 * USAGE: leslie3d [NX [NY [NZ [STEPS]]]]
 *   Prints one line per step (step, time, dt, total mass, total energy,
 *   momentum thickness of the layer), the conservation checks, and a 64-bit
 *   FNV-1a checksum of the final conserved arrays.  Output is deterministic.
 *
 * BUILD: gcc -O2 -o leslie3d leslie3d.c -lm
 *
 * Written for spmsim's suite (configs/suite/spec-upstream.toml)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>

#define NV 6                 /* conserved variables */
enum { IR = 0, IU, IV, IW, IE, IK };
#define G 2                  /* ghost layers */
#define PI_C 3.14159265358979323846

/* ---- physical and model constants (non-dimensional: rho0=1, c0=1, delta_w=1) */
static const double GAM   = 1.4;
static const double PR    = 0.72;   /* molecular Prandtl number */
static const double PRT   = 0.9;    /* turbulent Prandtl number */
static const double SIGK  = 1.0;    /* k-diffusion Schmidt number */
static const double CNU   = 0.067;  /* eddy-viscosity coefficient */
static const double CEPS  = 0.916;  /* dissipation coefficient */
static const double DU    = 0.8;    /* velocity difference: Mc = DU/2 / c0 = 0.4 */
static const double REY   = 500.0;  /* Re = rho0 DU delta_w / mu */
static const double CFL   = 0.5;
static const double H     = 0.25;   /* grid spacing (delta_w / 4) */

static double MU, RGAS, CP, KAPPA, DELTA;

static int NX, NY, NZ;
static long SY, SZ, NPT;       /* strides and points incl. ghosts */

static double *Q, *QS, *QN;    /* state, predicted, corrected: NV*NPT each */
static double *F;              /* node fluxes of one direction: NV*NPT */
static double *U, *V, *W, *P, *T, *K, *MUT; /* primitive arrays */

static inline long ix(int i, int j, int k)
{
    return (long)(i + G) + SY * (long)(j + G) + SZ * (long)(k + G);
}

/* ---- deterministic generator (64-bit LCG with output mixing) */
static uint64_t rng_state = 0x4C45534C49453344ULL;
static double rng_uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t z = rng_state;
    z ^= z >> 29; z *= 0xBF58476D1CE4E5B9ULL; z ^= z >> 32;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static double *alloc(long n)
{
    double *p = calloc((size_t)n, sizeof(double));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

/* ---- ghost filling: periodic in x and z, mirror (parity sgn) in y.
 * Only the face ghosts are needed: all stencils are axis-aligned. */
static void ghosts(double *a, double sgn)
{
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++) {
            long b = ix(0, j, k);
            for (int g = 1; g <= G; g++) {
                a[b - g] = a[b + NX - g];
                a[b + NX - 1 + g] = a[b + g - 1];
            }
        }
    for (int k = 0; k < NZ; k++)
        for (int g = 1; g <= G; g++) {
            long lo = ix(0, -g, k), lsrc = ix(0, g - 1, k);
            long hi = ix(0, NY - 1 + g, k), hsrc = ix(0, NY - g, k);
            for (int i = 0; i < NX; i++) {
                a[lo + i] = sgn * a[lsrc + i];
                a[hi + i] = sgn * a[hsrc + i];
            }
        }
    for (int g = 1; g <= G; g++)
        for (int j = 0; j < NY; j++) {
            long lo = ix(0, j, -g), lsrc = ix(0, j, NZ - g);
            long hi = ix(0, j, NZ - 1 + g), hsrc = ix(0, j, g - 1);
            for (int i = 0; i < NX; i++) {
                a[lo + i] = a[lsrc + i];
                a[hi + i] = a[hsrc + i];
            }
        }
}

/* ---- step 0 of every stage: primitive variables from the conserved ones */
static void primitives(const double *q)
{
    const double *r = q + IR * NPT, *mu = q + IU * NPT, *mv = q + IV * NPT,
                 *mw = q + IW * NPT, *e = q + IE * NPT, *rk = q + IK * NPT;
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++) {
            long n0 = ix(0, j, k);
            for (long n = n0; n < n0 + NX; n++) {
                double ri = 1.0 / r[n];
                double u = mu[n] * ri, v = mv[n] * ri, w = mw[n] * ri;
                double kk = rk[n] * ri;
                double p = (GAM - 1.0) * (e[n] - 0.5 * r[n] * (u * u + v * v + w * w) - rk[n]);
                U[n] = u; V[n] = v; W[n] = w; K[n] = kk; P[n] = p;
                T[n] = p * ri / RGAS;
                MUT[n] = r[n] * CNU * DELTA * sqrt(kk > 0.0 ? kk : 0.0);
            }
        }
    ghosts(U, 1.0); ghosts(V, -1.0); ghosts(W, 1.0); ghosts(P, 1.0);
    ghosts(T, 1.0); ghosts(K, 1.0); ghosts(MUT, 1.0);
}

/* ---- CFL-limited time step (convective + viscous limits) */
static double timestep(const double *q)
{
    const double *r = q + IR * NPT;
    double smax = 0.0, ih = 1.0 / H, ih2 = 3.0 / (H * H);
    double vfac = GAM / PR > 1.0 ? GAM / PR : 1.0;
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++) {
            long n0 = ix(0, j, k);
            for (long n = n0; n < n0 + NX; n++) {
                double c = sqrt(GAM * P[n] / r[n]);
                double s = (fabs(U[n]) + fabs(V[n]) + fabs(W[n]) + 3.0 * c) * ih
                         + 2.0 * vfac * (MU + MUT[n]) / r[n] * ih2;
                if (s > smax) smax = s;
            }
        }
    return CFL / smax;
}

/* ---- subgrid k source (production - dissipation), and the stage
 * initialisation:  dst = a*q0 + b*(q + dt*S(q))
 *   predictor: a=0, b=1      -> QS = Q + dt S(Q)
 *   corrector: a=b=1/2       -> QN = (Q + QS + dt S(QS))/2            */
static void stage_init(double *dst, const double *q0, const double *q,
                       double a, double b, double dt)
{
    for (int v = 0; v < NV; v++) {
        double *d = dst + v * NPT;
        const double *x0 = q0 + v * NPT, *x = q + v * NPT;
        for (int k = 0; k < NZ; k++)
            for (int j = 0; j < NY; j++) {
                long n0 = ix(0, j, k);
                for (long n = n0; n < n0 + NX; n++)
                    d[n] = a * x0[n] + b * x[n];
            }
    }
    const double *r = q + IR * NPT, *rk = q + IK * NPT;
    double *d = dst + IK * NPT;
    double i2h = 0.5 / H;
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++) {
            long n0 = ix(0, j, k);
            for (long n = n0; n < n0 + NX; n++) {
                /* resolved velocity gradients, central differences */
                double ux = (U[n + 1] - U[n - 1]) * i2h, uy = (U[n + SY] - U[n - SY]) * i2h,
                       uz = (U[n + SZ] - U[n - SZ]) * i2h;
                double vx = (V[n + 1] - V[n - 1]) * i2h, vy = (V[n + SY] - V[n - SY]) * i2h,
                       vz = (V[n + SZ] - V[n - SZ]) * i2h;
                double wx = (W[n + 1] - W[n - 1]) * i2h, wy = (W[n + SY] - W[n - SY]) * i2h,
                       wz = (W[n + SZ] - W[n - SZ]) * i2h;
                double div = ux + vy + wz;
                double sxy = 0.5 * (uy + vx), sxz = 0.5 * (uz + wx), syz = 0.5 * (vz + wy);
                double ss = ux * ux + vy * vy + wz * wz + 2.0 * (sxy * sxy + sxz * sxz + syz * syz);
                double kk = rk[n] / r[n];
                double kp = kk > 0.0 ? kk : 0.0;
                /* production P = tau_sgs : S ; dissipation D = C_eps rho k^1.5 / Delta */
                double prod = 2.0 * MUT[n] * (ss - div * div / 3.0) - (2.0 / 3.0) * rk[n] * div;
                double diss = CEPS * r[n] * kp * sqrt(kp) / DELTA;
                d[n] += b * dt * (prod - diss);
            }
        }
}

/* ---- node fluxes in direction d (0=x,1=y,2=z): inviscid + viscous + subgrid.
 * F_n = q_n u_d + (p + 2/3 rho k) delta - (mu+mu_t) (grad u + grad u^T - 2/3 div I)
 * energy: (rhoE + p + 2/3 rho k) u_d - u.tau - (kappa+kappa_t) dT - (mu+mu_t/sig_k) dk */
static void node_fluxes(const double *q, int d)
{
    const long st[3] = { 1, SY, SZ };
    const long sd = st[d];
    const double i2h = 0.5 / H;
    const double *r = q + IR * NPT, *qe = q + IE * NPT, *qk = q + IK * NPT;
    const double *mom[3] = { q + IU * NPT, q + IV * NPT, q + IW * NPT };
    const double *vel[3] = { U, V, W };
    const double *ud = vel[d];
    double *f0 = F + IR * NPT, *fe = F + IE * NPT, *fk = F + IK * NPT;
    double *fm[3] = { F + IU * NPT, F + IV * NPT, F + IW * NPT };
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++) {
            long n0 = ix(0, j, k);
            for (long n = n0; n < n0 + NX; n++) {
                /* derivatives d(u_c)/dx_d and d(u_d)/dx_c, c = x,y,z */
                double gcd[3], gdc[3];
                for (int c = 0; c < 3; c++) {
                    gcd[c] = (vel[c][n + sd] - vel[c][n - sd]) * i2h;
                    gdc[c] = (ud[n + st[c]] - ud[n - st[c]]) * i2h;
                }
                double div = (U[n + 1] - U[n - 1] + V[n + SY] - V[n - SY]
                              + W[n + SZ] - W[n - SZ]) * i2h;
                double mut = MUT[n];
                double mue = MU + mut;
                double kap = (MU / PR + mut / PRT) * CP;
                double dif = MU + mut / SIGK;
                double un = ud[n];
                double iso = P[n] + (2.0 / 3.0) * r[n] * K[n];
                double work = 0.0;
                for (int c = 0; c < 3; c++) {
                    double tau = mue * (gcd[c] + gdc[c]);
                    if (c == d) tau -= (2.0 / 3.0) * mue * div;
                    fm[c][n] = mom[c][n] * un - tau + (c == d ? iso : 0.0);
                    work += vel[c][n] * tau;
                }
                double dT = (T[n + sd] - T[n - sd]) * i2h;
                double dk = (K[n + sd] - K[n - sd]) * i2h;
                f0[n] = r[n] * un;
                fe[n] = (qe[n] + iso) * un - work - kap * dT - dif * dk;
                fk[n] = qk[n] * un - dif * dk;
            }
        }
    /* ghost node fluxes: periodic in x,z; mirror in y (y-momentum flux even,
     * all other y-fluxes odd) */
    for (int v = 0; v < NV; v++)
        ghosts(F + v * NPT, (d == 1 && v != IV) ? -1.0 : 1.0);
}

/* ---- flux-difference update:  dst -= coef * (H(i+1/2) - H(i-1/2))
 * 2-4 MacCormack one-sided face fluxes:
 *   forward : H(i+1/2) = (7 F(i+1) - F(i+2)) / 6
 *   backward: H(i+1/2) = (7 F(i)   - F(i-1)) / 6
 * In y the wall faces carry the slip-wall flux (only the pressure in the
 * y-momentum equation); everything else is zero there. */
static void flux_update(double *dst, int d, int fwd, double coef)
{
    const long st[3] = { 1, SY, SZ };
    const long s = st[d];
    const double c6 = coef / 6.0;
    for (int v = 0; v < NV; v++) {
        double *q = dst + v * NPT;
        const double *f = F + v * NPT;
        for (int k = 0; k < NZ; k++)
            for (int j = 0; j < NY; j++) {
                long n0 = ix(0, j, k);
                if (d == 1 && (j == 0 || j == NY - 1)) {
                    /* cell next to a wall: one face is the wall */
                    for (long n = n0; n < n0 + NX; n++) {
                        double hw = (v == IV) ? P[n] : 0.0;
                        double hlo, hup;
                        if (j == 0) {
                            hlo = 6.0 * hw;
                            hup = fwd ? 7.0 * f[n + s] - f[n + 2 * s] : 7.0 * f[n] - f[n - s];
                        } else {
                            hlo = fwd ? 7.0 * f[n] - f[n + s] : 7.0 * f[n - s] - f[n - 2 * s];
                            hup = 6.0 * hw;
                        }
                        q[n] -= c6 * (hup - hlo);
                    }
                } else if (fwd) {
                    for (long n = n0; n < n0 + NX; n++)
                        q[n] -= c6 * (8.0 * f[n + s] - 7.0 * f[n] - f[n + 2 * s]);
                } else {
                    for (long n = n0; n < n0 + NX; n++)
                        q[n] -= c6 * (7.0 * f[n] - 8.0 * f[n - s] + f[n - 2 * s]);
                }
            }
    }
}

/* ---- diagnostics: totals and momentum thickness
 * theta = (1/(rho0 DU^2)) sum_y  rho_bar (U1 - u_fav)(u_fav - U2) dy,
 * u_fav = plane Favre average <rho u>/<rho>. */
static void diagnostics(const double *q, double *mass, double *energy,
                        double *xmom, double *kin, double *theta)
{
    const double *r = q + IR * NPT, *mu = q + IU * NPT, *e = q + IE * NPT, *rk = q + IK * NPT;
    double vol = H * H * H, m = 0, en = 0, px = 0, ks = 0, th = 0;
    for (int j = 0; j < NY; j++) {
        double sr = 0, su = 0;
        double se = 0, sk = 0;
        for (int k = 0; k < NZ; k++) {
            /* row partial sums first: keeps the totals' rounding small */
            double rr = 0, ru = 0, re = 0, rq = 0;
            long n0 = ix(0, j, k);
            for (long n = n0; n < n0 + NX; n++) {
                rr += r[n]; ru += mu[n]; re += e[n]; rq += rk[n];
            }
            sr += rr; su += ru; se += re; sk += rq;
        }
        m += sr; px += su; en += se; ks += sk;
        double ufav = su / sr, rbar = sr / ((double)NX * NZ);
        th += rbar * (0.5 * DU - ufav) * (ufav + 0.5 * DU) * H;
    }
    *mass = m * vol; *energy = en * vol; *xmom = px * vol; *kin = ks * vol;
    *theta = th / (DU * DU);
}

/* ---- initial condition: temporal mixing layer with deterministic perturbations */
#define NMODE 16
static void initialise(void)
{
    double Lx = NX * H, Lz = NZ * H, p0 = 1.0 / GAM;
    double ax[NMODE], phx[NMODE], phz[NMODE];
    int mx[NMODE], mz[NMODE];
    for (int m = 0; m < NMODE; m++) {
        mx[m] = 1 + m % 4; mz[m] = m / 4;
        ax[m] = 0.02 * DU * (0.5 + 0.5 * rng_uniform());
        phx[m] = 2.0 * PI_C * rng_uniform();
        phz[m] = 2.0 * PI_C * rng_uniform();
    }
    double *cx = alloc((long)NMODE * NX), *cz = alloc((long)NMODE * NZ);
    for (int m = 0; m < NMODE; m++) {
        for (int i = 0; i < NX; i++)
            cx[m * NX + i] = cos(2.0 * PI_C * mx[m] * (i + 0.5) * H / Lx + phx[m]);
        for (int k = 0; k < NZ; k++)
            cz[m * NZ + k] = cos(2.0 * PI_C * mz[m] * (k + 0.5) * H / Lz + phz[m]);
    }
    double *r = Q + IR * NPT, *mu = Q + IU * NPT, *mv = Q + IV * NPT,
           *mw = Q + IW * NPT, *e = Q + IE * NPT, *rk = Q + IK * NPT;
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++) {
            double y = (j + 0.5 - 0.5 * NY) * H;
            double env = exp(-y * y);
            double ub = 0.5 * DU * tanh(2.0 * y);
            for (int i = 0; i < NX; i++) {
                long n = ix(i, j, k);
                double pert = 0.0;
                for (int m = 0; m < NMODE; m++)
                    pert += ax[m] * cx[m * NX + i] * cz[m * NZ + k];
                double nu = 0.002 * DU * (rng_uniform() - 0.5);
                double nv = 0.002 * DU * (rng_uniform() - 0.5);
                double nw = 0.002 * DU * (rng_uniform() - 0.5);
                double u = ub + (0.5 * pert + nu) * env;
                double v = (pert + nv) * env;
                double w = (0.5 * pert + nw) * env;
                double kk = 1e-4 * DU * DU * env + 1e-8;
                double rho = 1.0;
                r[n] = rho; mu[n] = rho * u; mv[n] = rho * v; mw[n] = rho * w;
                rk[n] = rho * kk;
                e[n] = p0 / (GAM - 1.0) + 0.5 * rho * (u * u + v * v + w * w) + rho * kk;
            }
        }
    free(cx); free(cz);
}

static uint64_t checksum(const double *q)
{
    uint64_t h = 1469598103934665603ULL;
    for (int v = 0; v < NV; v++)
        for (int k = 0; k < NZ; k++)
            for (int j = 0; j < NY; j++) {
                const unsigned char *b = (const unsigned char *)(q + v * NPT + ix(0, j, k));
                for (size_t t = 0; t < (size_t)NX * sizeof(double); t++) {
                    h ^= b[t];
                    h *= 1099511628211ULL;
                }
            }
    return h;
}

int main(int argc, char **argv)
{
    NX = 64; NY = 64; NZ = 48;
    int steps = 8;
    if (argc > 1) NX = atoi(argv[1]);
    if (argc > 2) NY = atoi(argv[2]);
    if (argc > 3) NZ = atoi(argv[3]);
    if (argc > 4) steps = atoi(argv[4]);
    if (NX < 4 || NY < 8 || NZ < 4 || steps < 1 || NX > 4096 || NY > 4096 || NZ > 4096) {
        fprintf(stderr, "usage: %s [NX>=4 [NY>=8 [NZ>=4 [STEPS>=1]]]]\n", argv[0]);
        return 1;
    }
    SY = NX + 2 * G; SZ = SY * (NY + 2 * G); NPT = SZ * (NZ + 2 * G);
    RGAS = 1.0 / GAM;                 /* so that T0 = 1 and c0 = 1 */
    CP = GAM * RGAS / (GAM - 1.0);
    MU = 1.0 * DU * 1.0 / REY;
    KAPPA = MU * CP / PR;
    DELTA = H;                        /* filter width = grid spacing */

    Q = alloc(NV * NPT); QS = alloc(NV * NPT); QN = alloc(NV * NPT); F = alloc(NV * NPT);
    U = alloc(NPT); V = alloc(NPT); W = alloc(NPT); P = alloc(NPT);
    T = alloc(NPT); K = alloc(NPT); MUT = alloc(NPT);
    printf("leslie3d stand-in: grid %d x %d x %d, %d steps, %.1f MB of arrays\n",
           NX, NY, NZ, steps, 31.0 * NPT * 8.0 / 1048576.0);

    initialise();
    double m0, e0, px0, k0, th0;
    diagnostics(Q, &m0, &e0, &px0, &k0, &th0);
    printf("%5s %12s %12s %22s %22s %14s\n", "step", "time", "dt", "mass", "energy", "theta");
    printf("%5d %12.6e %12.6e %22.15e %22.15e %14.8e\n", 0, 0.0, 0.0, m0, e0, th0);

    double time = 0.0;
    for (int s = 0; s < steps; s++) {
        /* primitives of Q^n and the CFL-limited step */
        primitives(Q);
        double dt = timestep(Q);
        int pat = s % 8;  /* bit d: predictor forward in direction d */

        /* predictor: QS = Q - dt * D_pred(F(Q)) + dt S(Q) */
        stage_init(QS, Q, Q, 0.0, 1.0, dt);
        for (int d = 0; d < 3; d++) {
            node_fluxes(Q, d);
            flux_update(QS, d, (pat >> d) & 1, dt / H);
        }

        /* corrector: QN = (Q + QS - dt * D_corr(F(QS)) + dt S(QS)) / 2,
         * with the one-sided differences in the opposite sense */
        primitives(QS);
        stage_init(QN, Q, QS, 0.5, 0.5, dt);
        for (int d = 0; d < 3; d++) {
            node_fluxes(QS, d);
            flux_update(QN, d, !((pat >> d) & 1), 0.5 * dt / H);
        }

        double *tmp = Q; Q = QN; QN = tmp;
        time += dt;
        double m, e, px, kk, th;
        diagnostics(Q, &m, &e, &px, &kk, &th);
        printf("%5d %12.6e %12.6e %22.15e %22.15e %14.8e\n", s + 1, time, dt, m, e, th);
    }

    double m, e, px, kk, th;
    diagnostics(Q, &m, &e, &px, &kk, &th);
    int ok_m = fabs(m - m0) / m0 < 1e-12, ok_e = fabs(e - e0) / e0 < 1e-12;
    int ok_t = th > th0;
    printf("check mass:     relative drift %.3e  %s\n", (m - m0) / m0, ok_m ? "OK" : "FAIL");
    printf("check energy:   relative drift %.3e  %s\n", (e - e0) / e0, ok_e ? "OK" : "FAIL");
    printf("check x-mom:    %.6e -> %.6e (abs drift %.3e)\n", px0, px, px - px0);
    printf("check theta:    %.8e -> %.8e (growth %.3f%%)  %s\n", th0, th,
           100.0 * (th - th0) / th0, ok_t ? "OK" : "FAIL");
    printf("subgrid k:      %.6e -> %.6e\n", k0, kk);
    printf("checksum %016llx\n", (unsigned long long)checksum(Q));
    free(Q); free(QS); free(QN); free(F);
    free(U); free(V); free(W); free(P); free(T); free(K); free(MUT);
    return (ok_m && ok_e) ? 0 : 2;
}
