/*
 * zeusmp.c -- a stand-in for SPEC CPU2006 434.zeusmp: 3-D ideal
 * magnetohydrodynamics on a staggered Cartesian mesh, ZEUS style.
 *
 * What SPEC's version computes.  434.zeusmp is built from ZEUS-MP, the
 * parallel member of the ZEUS family of astrophysical fluid-dynamics codes
 * (Laboratory for Computational Astrophysics, NCSA / UCSD; Stone & Norman
 * 1992 for ZEUS-2D, Hayes et al. 2006 for ZEUS-MP), written in Fortran.
 * SPEC's benchmark runs the ideal-MHD solver in three dimensions on a
 * uniform Cartesian grid; the reference problem is a blast wave: a region
 * of very high pressure in a uniform medium threaded by a uniform magnetic
 * field along the x axis, with outflow boundaries.  ZEUS's method is
 * finite-difference and time-explicit on a staggered mesh: scalars
 * (density, internal energy) sit at zone centres, vector components
 * (velocity, magnetic field) on the zone faces normal to them.  Each time
 * step is operator split into a "source" step (accelerations by the
 * pressure gradient and the Lorentz force, von Neumann-Richtmyer
 * artificial viscosity and its heating, compressional p dV heating done
 * time-centred and implicit) and a "transport" step (advection of mass,
 * internal energy and the momenta along each axis in turn, with the
 * second-order monotone upwind interpolation of van Leer and "consistent
 * transport": every quantity is carried by the same mass flux).  The
 * induction equation is advanced by constrained transport: EMFs on the
 * zone edges, whose curl updates the face fields, so div B stays zero to
 * rounding; the edge values come from the Method of Characteristics
 * (MOC-CT, Hawley & Stone 1995), which also supplies the transverse
 * Lorentz forces.  The time step obeys a Courant condition.  The data are
 * many separate 3-D arrays of doubles (one per variable, plus scratch),
 * swept by k, j, i loop nests with i fastest (Fortran order); sweeps along
 * y and z reach neighbours a row or a plane away.
 *
 * What this program does.  The same kind of computation, written from
 * scratch in C: 22 separate 3-D arrays of doubles with 3 ghost zones per
 * side (d, e, p; v1..v3 and b1..b3 on faces; q1..q3 viscous pressures;
 * emf1..emf3 on edges; s1..s3 momentum densities; mass, energy and
 * momentum fluxes; e/d scratch), all swept i fastest.  Each step:
 * Courant time step (fast magnetosonic, flow and viscous rates combined in
 * quadrature); source step = pressure + Lorentz (J x B) accelerations,
 * quadratic artificial viscosity with its heating, implicit p dV heating;
 * constrained transport of B; transport step = three 1-D van Leer sweeps
 * with consistent transport, in x,y,z order on odd steps and z,y,x on
 * even ones.  Problem: unit cube, d = 1 with a 0.1% ripple from a
 * fixed-seed generator, p = 0.1, a sphere of radius 0.1 at p = 10,
 * B = (1,0,0) (plasma beta 0.2 outside), gamma = 5/3.
 *
 * What it simplifies.  No Method of Characteristics: edge values of B
 * for the EMFs are van Leer upwind interpolations along the edge-averaged
 * flow velocity (the upwind CT of Evans & Hawley 1988), and the full
 * Lorentz force is applied in the source step as J x B with J = curl B on
 * the edges, averaged to the faces.  Only the quadratic viscosity (no
 * linear term); no moving grid, gravity, radiation, species or MPI.
 * Boundaries are periodic by default, so that mass conservation can be
 * checked to rounding; SPEC's outflow boundaries are an option.  The
 * code evolves internal energy, as ZEUS does, so total energy is
 * conserved only to truncation error.
 *
 * Default size: 64 x 64 x 64 zones, 7 steps.  Footprint: 22 arrays of
 * 70^3 doubles = 60 MB (maximum RSS 58,364 kB (57 MiB) by /usr/bin/time -v).  Instruction count:
 * 3.06e9 user-mode instructions (3,062,555,476), counted with valgrind --tool=lackey --basic-counts=yes (no
 * hardware counters were available to perf on the measuring machine).
 * Output: one line per step (step, time, dt, total mass, total energy,
 * max |div B| dx/|B|, shock radius), then the conservation checks and an
 * FNV-1a checksum of the final d, e, v and B arrays.
 *
 * Usage: zeusmp [NX [NY [NZ [STEPS [periodic|outflow]]]]]
 *   (NY and NZ default to the previous size given).
 * Build: gcc -O2 -o zeusmp zeusmp.c -lm
 *
 * Written for spmsim's suite (configs/suite/spec-upstream.toml)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>

#define NG 3                    /* ghost zones on each side of each axis */

/* ---------------------------------------------------------------------
 * Grid and physical parameters
 * ------------------------------------------------------------------- */
static int nn[3];               /* active zones per axis */
static int sx, sy, sz;          /* padded extents (n + 2*NG) */
static long ntot;               /* padded zones in all */
static long st[3];              /* memory stride of each axis */
static double dx[3];            /* zone widths */
static const double gam = 5.0 / 3.0;  /* ratio of specific heats */
static const double qcon = 2.0;       /* von Neumann-Richtmyer coefficient */
static const double courno = 0.5;     /* Courant number */
static int periodic = 1;              /* 1 periodic, 0 outflow */

/* Field arrays, one separate 3-D array per variable, Fortran order
 * (i fastest).  Centred: d, e, p.  Face-centred: v[a] and b[a] live on
 * the a-faces (index i means the face at i-1/2).  Edge-centred: emf[a]
 * on the edges parallel to axis a (also used for the current J). */
static double *d, *e, *p;
static double *v[3], *b[3];
static double *q[3];            /* artificial viscous pressure per axis */
static double *emf[3];          /* edge EMFs (and currents in the source step) */
static double *s[3];            /* face-centred momentum densities */
static double *mflx, *eflx;     /* mass and energy fluxes of a sweep */
static double *flx;             /* momentum flux scratch */
static double *wk;              /* specific energy e/d scratch */

#define IX(i, j, k) ((long)(i) + (long)sx * ((long)(j) + (long)sy * (long)(k)))

/* loop over a box of zones, i fastest (Fortran order) */
#define LOOP3(l0, h0, l1, h1, l2, h2)              \
    for (int k = (l2); k <= (h2); k++)             \
        for (int j = (l1); j <= (h1); j++)         \
            for (int i = (l0); i <= (h0); i++)

/* boundary source maps: for axis a and mode m (0 centred or tangential,
 * 1 face-normal, 2 face-normal whose last face is evolved), map[a][m][x]
 * is the zone whose value fills zone x (identity in the active range). */
static int *bmap[3][3];

static double *alloc3(void)
{
    double *a = malloc(sizeof(double) * (size_t)ntot);
    if (!a) { fprintf(stderr, "zeusmp: out of memory\n"); exit(1); }
    memset(a, 0, sizeof(double) * (size_t)ntot);
    return a;
}

static void setup_bmaps(void)
{
    int ext[3] = { sx, sy, sz };
    for (int a = 0; a < 3; a++) {
        int n = nn[a];
        for (int m = 0; m < 3; m++) {
            int *mp = malloc(sizeof(int) * (size_t)ext[a]);
            for (int x = 0; x < ext[a]; x++) {
                int src = x;
                if (periodic) {
                    if (x < NG) src = x + n;
                    else if (x >= NG + n) src = x - n;
                } else {
                    if (x < NG) src = NG;
                    else if (m == 2) { if (x > NG + n) src = NG + n; }
                    else if (x >= NG + n) src = NG + n - 1;
                }
                mp[x] = src;
            }
            bmap[a][m] = mp;
        }
    }
}

/* Boundary values ("bvald", "bvalv", ...): fill the ghost zones of one
 * array.  fdir is the axis on whose faces the array lives (-1: centred),
 * keep says the last face on that axis is evolved (normal B). */
static void bval(double *a, int fdir, int keep)
{
    const int *mx = bmap[0][fdir == 0 ? (keep ? 2 : 1) : 0];
    const int *my = bmap[1][fdir == 1 ? (keep ? 2 : 1) : 0];
    const int *mz = bmap[2][fdir == 2 ? (keep ? 2 : 1) : 0];
    /* inner and outer i-boundaries */
    for (int k = 0; k < sz; k++)
        for (int j = 0; j < sy; j++)
            for (int i = 0; i < sx; i++) {
                if (i == NG) i = NG + nn[0] - 1;
                if (mx[i] != i) a[IX(i, j, k)] = a[IX(mx[i], j, k)];
            }
    /* j-boundaries: whole rows */
    for (int k = 0; k < sz; k++)
        for (int j = 0; j < sy; j++) {
            if (my[j] == j) continue;
            memcpy(&a[IX(0, j, k)], &a[IX(0, my[j], k)], sizeof(double) * (size_t)sx);
        }
    /* k-boundaries: whole planes */
    for (int k = 0; k < sz; k++) {
        if (mz[k] == k) continue;
        memcpy(&a[IX(0, 0, k)], &a[IX(0, 0, mz[k])], sizeof(double) * (size_t)sx * (size_t)sy);
    }
}

static void bval_all(void)
{
    bval(d, -1, 0);
    bval(e, -1, 0);
    for (int a = 0; a < 3; a++) bval(v[a], a, 0);
    for (int a = 0; a < 3; a++) bval(b[a], a, 1);
}

/* van Leer (1977) monotone upwind interpolation to the interface between
 * zone c-s and zone c of quantity qq, for a flow of speed u through it:
 * harmonic-mean slope, traced back over half the distance u*dt. */
static inline double vlface(const double *qq, long c, long s_, double u, double dtdx)
{
    if (u >= 0.0) {
        long l = c - s_;
        double dl = qq[l] - qq[l - s_], dr = qq[c] - qq[l];
        double sl = (dl * dr > 0.0) ? 2.0 * dl * dr / (dl + dr) : 0.0;
        return qq[l] + 0.5 * (1.0 - u * dtdx) * sl;
    } else {
        double dl = qq[c] - qq[c - s_], dr = qq[c + s_] - qq[c];
        double sl = (dl * dr > 0.0) ? 2.0 * dl * dr / (dl + dr) : 0.0;
        return qq[c] - 0.5 * (1.0 + u * dtdx) * sl;
    }
}

/* ---------------------------------------------------------------------
 * Time step ("nudt"): Courant condition on fast magnetosonic speed,
 * flow speed and viscous diffusion, combined in quadrature as in ZEUS;
 * growth limited to 30% per step.
 * ------------------------------------------------------------------- */
static double newdt(double dtold)
{
    double rmax2 = 0.0;
    double dmin = dx[0];
    if (dx[1] < dmin) dmin = dx[1];
    if (dx[2] < dmin) dmin = dx[2];
    const double *v1 = v[0], *v2 = v[1], *v3 = v[2];
    const double *b1 = b[0], *b2 = b[1], *b3 = b[2];
    LOOP3(NG, NG + nn[0] - 1, NG, NG + nn[1] - 1, NG, NG + nn[2] - 1) {
        long c = IX(i, j, k);
        double dd = d[c];
        double bc1 = 0.5 * (b1[c] + b1[c + st[0]]);
        double bc2 = 0.5 * (b2[c] + b2[c + st[1]]);
        double bc3 = 0.5 * (b3[c] + b3[c + st[2]]);
        double cs2 = gam * (gam - 1.0) * e[c] / dd;
        double va2 = (bc1 * bc1 + bc2 * bc2 + bc3 * bc3) / dd;
        double rc = sqrt(cs2 + va2) / dmin;
        double r1 = fabs(0.5 * (v1[c] + v1[c + st[0]])) / dx[0];
        double r2 = fabs(0.5 * (v2[c] + v2[c + st[1]])) / dx[1];
        double r3 = fabs(0.5 * (v3[c] + v3[c + st[2]])) / dx[2];
        double dv1 = v1[c + st[0]] - v1[c], dv2 = v2[c + st[1]] - v2[c], dv3 = v3[c + st[2]] - v3[c];
        double rq = 0.0, t;
        if (dv1 < 0.0 && (t = -4.0 * qcon * dv1 / dx[0]) > rq) rq = t;
        if (dv2 < 0.0 && (t = -4.0 * qcon * dv2 / dx[1]) > rq) rq = t;
        if (dv3 < 0.0 && (t = -4.0 * qcon * dv3 / dx[2]) > rq) rq = t;
        double r2sum = rc * rc + r1 * r1 + r2 * r2 + r3 * r3 + rq * rq;
        if (r2sum > rmax2) rmax2 = r2sum;
    }
    double dt = courno / sqrt(rmax2);
    if (dtold > 0.0 && dt > 1.3 * dtold) dt = 1.3 * dtold;
    return dt;
}

/* ---------------------------------------------------------------------
 * Source step, part 1 ("forces"): accelerate the face velocities by the
 * pressure gradient and the Lorentz force J x B.  J = curl B is formed on
 * the zone edges from the face-centred B; each force component is the
 * average of the two edge products bracketing the face.
 * ------------------------------------------------------------------- */
static void forces(double dt)
{
    const int i1 = NG + nn[0] - 1, j1 = NG + nn[1] - 1, k1 = NG + nn[2] - 1;
    const long s1 = st[0], s2 = st[1], s3 = st[2];
    double *b1 = b[0], *b2 = b[1], *b3 = b[2];
    double *J1 = emf[0], *J2 = emf[1], *J3 = emf[2];

    for (long c = 0; c < ntot; c++) p[c] = (gam - 1.0) * e[c];

    /* edge currents: J1 on (i, j-1/2, k-1/2), J2 on (i-1/2, j, k-1/2),
     * J3 on (i-1/2, j-1/2, k) */
    LOOP3(NG, i1 + 1, NG, j1 + 1, NG, k1 + 1) {
        long c = IX(i, j, k);
        J1[c] = (b3[c] - b3[c - s2]) / dx[1] - (b2[c] - b2[c - s3]) / dx[2];
        J2[c] = (b1[c] - b1[c - s3]) / dx[2] - (b3[c] - b3[c - s1]) / dx[0];
        J3[c] = (b2[c] - b2[c - s1]) / dx[0] - (b1[c] - b1[c - s2]) / dx[1];
    }
    LOOP3(NG, i1, NG, j1, NG, k1) {
        long c = IX(i, j, k);
        /* x1-face (i-1/2, j, k): F1 = J2 B3 - J3 B2 */
        double f1 = 0.25 * (J2[c] * (b3[c - s1] + b3[c])
                          + J2[c + s3] * (b3[c - s1 + s3] + b3[c + s3]))
                  - 0.25 * (J3[c] * (b2[c - s1] + b2[c])
                          + J3[c + s2] * (b2[c - s1 + s2] + b2[c + s2]));
        /* x2-face (i, j-1/2, k): F2 = J3 B1 - J1 B3 */
        double f2 = 0.25 * (J3[c] * (b1[c - s2] + b1[c])
                          + J3[c + s1] * (b1[c - s2 + s1] + b1[c + s1]))
                  - 0.25 * (J1[c] * (b3[c - s2] + b3[c])
                          + J1[c + s3] * (b3[c - s2 + s3] + b3[c + s3]));
        /* x3-face (i, j, k-1/2): F3 = J1 B2 - J2 B1 */
        double f3 = 0.25 * (J1[c] * (b2[c - s3] + b2[c])
                          + J1[c + s2] * (b2[c - s3 + s2] + b2[c + s2]))
                  - 0.25 * (J2[c] * (b1[c - s3] + b1[c])
                          + J2[c + s1] * (b1[c - s3 + s1] + b1[c + s1]));
        v[0][c] += dt * (f1 - (p[c] - p[c - s1]) / dx[0]) / (0.5 * (d[c] + d[c - s1]));
        v[1][c] += dt * (f2 - (p[c] - p[c - s2]) / dx[1]) / (0.5 * (d[c] + d[c - s2]));
        v[2][c] += dt * (f3 - (p[c] - p[c - s3]) / dx[2]) / (0.5 * (d[c] + d[c - s3]));
    }
    for (int a = 0; a < 3; a++) bval(v[a], a, 0);
}

/* ---------------------------------------------------------------------
 * Source step, part 2 ("viscus"): von Neumann & Richtmyer quadratic
 * artificial viscosity, q = qcon * d * (dv)^2 in compressing zones, one
 * diagonal component per axis; its gradient decelerates the flow and
 * its work q*dv heats the gas (shock dissipation).
 * ------------------------------------------------------------------- */
static void viscus(double dt)
{
    const int i1 = NG + nn[0] - 1, j1 = NG + nn[1] - 1, k1 = NG + nn[2] - 1;
    for (int a = 0; a < 3; a++) {
        const long sa = st[a];
        const double *va = v[a];
        double *qa = q[a];
        LOOP3(NG - 1, i1 + 1, NG - 1, j1 + 1, NG - 1, k1 + 1) {
            long c = IX(i, j, k);
            double dv = va[c + sa] - va[c];
            qa[c] = (dv < 0.0) ? qcon * d[c] * dv * dv : 0.0;
        }
    }
    LOOP3(NG, i1, NG, j1, NG, k1) {
        long c = IX(i, j, k);
        /* viscous heating from the old velocities */
        e[c] -= dt * (q[0][c] * (v[0][c + st[0]] - v[0][c]) / dx[0]
                    + q[1][c] * (v[1][c + st[1]] - v[1][c]) / dx[1]
                    + q[2][c] * (v[2][c + st[2]] - v[2][c]) / dx[2]);
    }
    LOOP3(NG, i1, NG, j1, NG, k1) {
        long c = IX(i, j, k);
        for (int a = 0; a < 3; a++) {
            long sa = st[a];
            v[a][c] -= dt * (q[a][c] - q[a][c - sa]) / (dx[a] * 0.5 * (d[c] + d[c - sa]));
        }
    }
    for (int a = 0; a < 3; a++) bval(v[a], a, 0);
}

/* ---------------------------------------------------------------------
 * Source step, part 3 ("pdv"): compressional heating -p div v, done with
 * ZEUS's time-centred implicit form for an ideal gas,
 *   e_new = e (1 - dt/2 (gam-1) div v) / (1 + dt/2 (gam-1) div v).
 * ------------------------------------------------------------------- */
static void pdv(double dt)
{
    const int i1 = NG + nn[0] - 1, j1 = NG + nn[1] - 1, k1 = NG + nn[2] - 1;
    LOOP3(NG, i1, NG, j1, NG, k1) {
        long c = IX(i, j, k);
        double divv = (v[0][c + st[0]] - v[0][c]) / dx[0]
                    + (v[1][c + st[1]] - v[1][c]) / dx[1]
                    + (v[2][c + st[2]] - v[2][c]) / dx[2];
        double h = 0.5 * dt * (gam - 1.0) * divv;
        e[c] *= (1.0 - h) / (1.0 + h);
    }
    bval(e, -1, 0);
}

/* ---------------------------------------------------------------------
 * Constrained transport ("ct"): EMFs E = v x B on the zone edges, then
 * dB/dt = curl E on each face, which keeps div B = 0 to rounding.
 * ZEUS evaluates the edge values of v and B by the Method of
 * Characteristics along Alfven characteristics; here (simplification)
 * each B component is interpolated to the edge by the van Leer upwind
 * scheme along the transverse edge-averaged flow velocity (the original
 * Evans & Hawley upwind CT), and v is the plain edge average.
 * ------------------------------------------------------------------- */
static void ct(double dt)
{
    const int i1 = NG + nn[0] - 1, j1 = NG + nn[1] - 1, k1 = NG + nn[2] - 1;
    const long s1 = st[0], s2 = st[1], s3 = st[2];
    const double *v1 = v[0], *v2 = v[1], *v3 = v[2];
    double *b1 = b[0], *b2 = b[1], *b3 = b[2];
    double *E1 = emf[0], *E2 = emf[1], *E3 = emf[2];
    const double r1 = dt / dx[0], r2 = dt / dx[1], r3 = dt / dx[2];

    LOOP3(NG, i1 + 1, NG, j1 + 1, NG, k1 + 1) {
        long c = IX(i, j, k);
        /* E1 on (i, j-1/2, k-1/2) = v2 b3 - v3 b2 */
        double v2e = 0.5 * (v2[c - s3] + v2[c]);
        double v3e = 0.5 * (v3[c - s2] + v3[c]);
        E1[c] = v2e * vlface(b3, c, s2, v2e, r2) - v3e * vlface(b2, c, s3, v3e, r3);
        /* E2 on (i-1/2, j, k-1/2) = v3 b1 - v1 b3 */
        double v3f = 0.5 * (v3[c - s1] + v3[c]);
        double v1f = 0.5 * (v1[c - s3] + v1[c]);
        E2[c] = v3f * vlface(b1, c, s3, v3f, r3) - v1f * vlface(b3, c, s1, v1f, r1);
        /* E3 on (i-1/2, j-1/2, k) = v1 b2 - v2 b1 */
        double v1g = 0.5 * (v1[c - s2] + v1[c]);
        double v2g = 0.5 * (v2[c - s1] + v2[c]);
        E3[c] = v1g * vlface(b2, c, s1, v1g, r1) - v2g * vlface(b1, c, s2, v2g, r2);
    }
    /* induction equation on the faces (normal faces up to the last one) */
    LOOP3(NG, i1 + 1, NG, j1, NG, k1) {
        long c = IX(i, j, k);
        b1[c] += r2 * (E3[c + s2] - E3[c]) - r3 * (E2[c + s3] - E2[c]);
    }
    LOOP3(NG, i1, NG, j1 + 1, NG, k1) {
        long c = IX(i, j, k);
        b2[c] += r3 * (E1[c + s3] - E1[c]) - r1 * (E3[c + s1] - E3[c]);
    }
    LOOP3(NG, i1, NG, j1, NG, k1 + 1) {
        long c = IX(i, j, k);
        b3[c] += r1 * (E2[c + s1] - E2[c]) - r2 * (E1[c + s2] - E1[c]);
    }
    for (int a = 0; a < 3; a++) bval(b[a], a, 1);
}

/* ---------------------------------------------------------------------
 * Transport step, one directional sweep along axis a ("tranx1" +
 * "momx1", ...).  Consistent transport: the mass flux through each face
 * is v * d*, with d* the van Leer upwind face value; energy and momenta
 * are carried by that same mass flux times upwind-interpolated specific
 * quantities (e/d, and the velocities themselves).
 * ------------------------------------------------------------------- */
static void sweep(int a, double dt)
{
    const int lo[3] = { NG, NG, NG };
    const int hi[3] = { NG + nn[0] - 1, NG + nn[1] - 1, NG + nn[2] - 1 };
    const long sa = st[a];
    const double dtdx = dt / dx[a];
    const double *va = v[a];

    bval(d, -1, 0);
    bval(e, -1, 0);
    for (int m = 0; m < 3; m++) bval(v[m], m, 0);

    for (long c = 0; c < ntot; c++) wk[c] = e[c] / d[c];

    /* mass and energy fluxes on the a-faces (one zone beyond the active
     * range on every axis, for the transverse averages below) */
    LOOP3(lo[0] - 1, hi[0] + 1, lo[1] - 1, hi[1] + 1, lo[2] - 1, hi[2] + 1) {
        long c = IX(i, j, k);
        double u = va[c];
        double mf = u * vlface(d, c, sa, u, dtdx);
        mflx[c] = mf;
        eflx[c] = mf * vlface(wk, c, sa, u, dtdx);
    }

    /* momenta: s_m = v_m * (face-averaged density), then flux divergence */
    for (int m = 0; m < 3; m++) {
        const long sm = st[m];
        double *sv = s[m];
        const double *vm = v[m];
        LOOP3(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]) {
            long c = IX(i, j, k);
            sv[c] = vm[c] * 0.5 * (d[c] + d[c - sm]);
        }
        if (m == a) {
            /* normal momentum: fluxes at zone centres */
            int l0 = lo[0], l1 = lo[1], l2 = lo[2];
            if (a == 0) l0--; else if (a == 1) l1--; else l2--;
            LOOP3(l0, hi[0], l1, hi[1], l2, hi[2]) {
                long c = IX(i, j, k);
                double uc = 0.5 * (va[c] + va[c + sa]);
                flx[c] = 0.5 * (mflx[c] + mflx[c + sa]) * vlface(vm, c + sa, sa, uc, dtdx);
            }
            LOOP3(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]) {
                long c = IX(i, j, k);
                sv[c] -= dtdx * (flx[c] - flx[c - sa]);
            }
        } else {
            /* transverse momentum: fluxes at the a-face x m-face edges */
            int h0 = hi[0], h1 = hi[1], h2 = hi[2];
            if (a == 0) h0++; else if (a == 1) h1++; else h2++;
            LOOP3(lo[0], h0, lo[1], h1, lo[2], h2) {
                long c = IX(i, j, k);
                double ua = 0.5 * (va[c] + va[c - sm]);
                flx[c] = 0.5 * (mflx[c] + mflx[c - sm]) * vlface(vm, c, sa, ua, dtdx);
            }
            LOOP3(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]) {
                long c = IX(i, j, k);
                sv[c] -= dtdx * (flx[c + sa] - flx[c]);
            }
        }
    }

    /* density and internal energy */
    LOOP3(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]) {
        long c = IX(i, j, k);
        d[c] -= dtdx * (mflx[c + sa] - mflx[c]);
        e[c] -= dtdx * (eflx[c + sa] - eflx[c]);
    }
    bval(d, -1, 0);

    /* new velocities from the transported momenta */
    for (int m = 0; m < 3; m++) {
        const long sm = st[m];
        const double *sv = s[m];
        double *vm = v[m];
        LOOP3(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]) {
            long c = IX(i, j, k);
            vm[c] = sv[c] / (0.5 * (d[c] + d[c - sm]));
        }
    }
}

/* Transport step: three 1-D sweeps, order alternated every step
 * (x1,x2,x3 then x3,x2,x1) to cancel the splitting bias. */
static void transprt(double dt, int step)
{
    if (step & 1) { sweep(0, dt); sweep(1, dt); sweep(2, dt); }
    else          { sweep(2, dt); sweep(1, dt); sweep(0, dt); }
    bval_all();
}

/* ---------------------------------------------------------------------
 * Diagnostics
 * ------------------------------------------------------------------- */
struct diag { double mass, etot, divb, rshock, xext, perpext; };

static struct diag diagnose(void)
{
    struct diag g = { 0, 0, 0, 0, 0, 0 };
    const double dv = dx[0] * dx[1] * dx[2];
    double bmax = 0.0;
    LOOP3(NG, NG + nn[0] - 1, NG, NG + nn[1] - 1, NG, NG + nn[2] - 1) {
        long c = IX(i, j, k);
        double b1c = 0.5 * (b[0][c] + b[0][c + st[0]]);
        double b2c = 0.5 * (b[1][c] + b[1][c + st[1]]);
        double b3c = 0.5 * (b[2][c] + b[2][c + st[2]]);
        double v1c = 0.5 * (v[0][c] + v[0][c + st[0]]);
        double v2c = 0.5 * (v[1][c] + v[1][c + st[1]]);
        double v3c = 0.5 * (v[2][c] + v[2][c + st[2]]);
        double bb = b1c * b1c + b2c * b2c + b3c * b3c;
        if (bb > bmax) bmax = bb;
        g.mass += d[c];
        g.etot += e[c] + 0.5 * d[c] * (v1c * v1c + v2c * v2c + v3c * v3c) + 0.5 * bb;
        double div = (b[0][c + st[0]] - b[0][c]) / dx[0]
                   + (b[1][c + st[1]] - b[1][c]) / dx[1]
                   + (b[2][c + st[2]] - b[2][c]) / dx[2];
        if (fabs(div) > g.divb) g.divb = fabs(div);
        /* shock radius: farthest zone with pressure above 1.5x ambient */
        if ((gam - 1.0) * e[c] > 0.15) {
            double x = (i - NG + 0.5) * dx[0] - 0.5;
            double y = (j - NG + 0.5) * dx[1] - 0.5;
            double z = (k - NG + 0.5) * dx[2] - 0.5;
            double r = sqrt(x * x + y * y + z * z);
            double rp = sqrt(y * y + z * z);
            if (r > g.rshock) g.rshock = r;
            if (fabs(x) > g.xext) g.xext = fabs(x);
            if (rp > g.perpext) g.perpext = rp;
        }
    }
    g.mass *= dv;
    g.etot *= dv;
    /* div B relative to |B|/dx */
    g.divb *= dx[0] / (sqrt(bmax) > 0 ? sqrt(bmax) : 1.0);
    return g;
}

/* FNV-1a hash of the active zones of one array */
static uint64_t hash_array(uint64_t h, const double *a)
{
    LOOP3(NG, NG + nn[0] - 1, NG, NG + nn[1] - 1, NG, NG + nn[2] - 1) {
        const unsigned char *bytes = (const unsigned char *)&a[IX(i, j, k)];
        for (int n = 0; n < 8; n++) { h ^= bytes[n]; h *= 1099511628211ULL; }
    }
    return h;
}

/* ---------------------------------------------------------------------
 * Problem generator: MHD blast wave.  Unit cube centred on the origin,
 * d = 1 (with a 0.1% deterministic pseudo-random ripple), p = 0.1, a
 * sphere of radius 0.1 at p = 10, uniform B = (1,0,0) along x1.
 * ------------------------------------------------------------------- */
static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static double rng(void)          /* 64-bit LCG (Knuth MMIX), in [0,1) */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static void init_problem(void)
{
    const double r0 = 0.1, pin = 10.0, pout = 0.1, b0 = 1.0;
    LOOP3(0, sx - 1, 0, sy - 1, 0, sz - 1) {
        long c = IX(i, j, k);
        double x = (i - NG + 0.5) * dx[0] - 0.5;
        double y = (j - NG + 0.5) * dx[1] - 0.5;
        double z = (k - NG + 0.5) * dx[2] - 0.5;
        double r = sqrt(x * x + y * y + z * z);
        d[c] = 1.0 + 1.0e-3 * (rng() - 0.5);
        e[c] = ((r < r0) ? pin : pout) / (gam - 1.0);
        v[0][c] = v[1][c] = v[2][c] = 0.0;
        b[0][c] = b0;
        b[1][c] = b[2][c] = 0.0;
    }
    bval_all();
}

int main(int argc, char **argv)
{
    int nsteps = 7;
    nn[0] = nn[1] = nn[2] = 64;
    if (argc > 1) nn[0] = nn[1] = nn[2] = atoi(argv[1]);
    if (argc > 2) nn[1] = nn[2] = atoi(argv[2]);
    if (argc > 3) nn[2] = atoi(argv[3]);
    if (argc > 4) nsteps = atoi(argv[4]);
    if (argc > 5) periodic = (argv[5][0] != 'o');
    if (nn[0] < 4 || nn[1] < 4 || nn[2] < 4 || nsteps < 0) {
        fprintf(stderr, "usage: zeusmp [NX [NY [NZ [STEPS [periodic|outflow]]]]]\n");
        return 1;
    }
    sx = nn[0] + 2 * NG; sy = nn[1] + 2 * NG; sz = nn[2] + 2 * NG;
    ntot = (long)sx * sy * sz;
    st[0] = 1; st[1] = sx; st[2] = (long)sx * sy;
    for (int a = 0; a < 3; a++) dx[a] = 1.0 / nn[a];

    d = alloc3(); e = alloc3(); p = alloc3();
    for (int a = 0; a < 3; a++) {
        v[a] = alloc3(); b[a] = alloc3(); q[a] = alloc3();
        emf[a] = alloc3(); s[a] = alloc3();
    }
    mflx = alloc3(); eflx = alloc3(); flx = alloc3(); wk = alloc3();
    setup_bmaps();
    init_problem();

    printf("zeusmp: MHD blast wave, %d x %d x %d zones, %d steps, %s boundaries, %.1f MB of arrays\n",
           nn[0], nn[1], nn[2], nsteps, periodic ? "periodic" : "outflow",
           22.0 * ntot * sizeof(double) / 1.0e6);
    struct diag g0 = diagnose();
    printf("step %5d  t=%.6e  dt=%.6e  mass=%.15e  etot=%.10e  divB=%.2e  rshock=%.4f\n",
           0, 0.0, 0.0, g0.mass, g0.etot, g0.divb, g0.rshock);

    double t = 0.0, dt = 0.0;
    struct diag g = g0;
    for (int step = 1; step <= nsteps; step++) {
        dt = newdt(dt);
        forces(dt);      /* source step: pressure + Lorentz accelerations */
        viscus(dt);      /* source step: artificial viscosity */
        pdv(dt);         /* source step: compressional heating */
        ct(dt);          /* induction equation by constrained transport */
        transprt(dt, step); /* transport step: split van Leer advection */
        t += dt;
        g = diagnose();
        printf("step %5d  t=%.6e  dt=%.6e  mass=%.15e  etot=%.10e  divB=%.2e  rshock=%.4f\n",
               step, t, dt, g.mass, g.etot, g.divb, g.rshock);
    }

    uint64_t h = 1469598103934665603ULL;
    h = hash_array(h, d); h = hash_array(h, e);
    for (int a = 0; a < 3; a++) h = hash_array(h, v[a]);
    for (int a = 0; a < 3; a++) h = hash_array(h, b[a]);
    printf("mass change (relative): %.3e\n", (g.mass - g0.mass) / g0.mass);
    printf("max |div B| dx/|B|: %.3e\n", g.divb);
    printf("shock radius: %.4f -> %.4f (extent along B %.4f, across B %.4f)\n",
           g0.rshock, g.rshock, g.xext, g.perpext);
    printf("checksum: %016llx\n", (unsigned long long)h);
    return 0;
}
