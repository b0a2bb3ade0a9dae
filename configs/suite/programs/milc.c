/* Lattice QCD with two flavours of dynamical staggered quarks in the
 * manner of SPEC CPU2006's 433.milc, the serial build of the MILC
 * collaboration's su3imp program (improved staggered quarks, "fat" and
 * Naik links). SPEC's input (su3imp.in: 28x28x28x96 in SPEC's sample,
 * beta 7.11, quark mass 0.0124, u0 0.8788; test, train and ref differ in
 * the lattice only) starts a fresh gauge field and runs one
 * molecular-dynamics trajectory of 125 steps of 0.008. Each step rebuilds
 * the fat links (smeared from paths of gauge links) and the three-link
 * long links, draws a Gaussian source, inverts the staggered Dirac
 * operator on the even sites by conjugate gradient (residual 5e-5, up to
 * 350 iterations), turns the solution into a force on every link, adds
 * the gauge action's force from staples, and moves and reunitarises every
 * link; the trajectory ends with measurements (plaquette, Polyakov loop,
 * psi-bar-psi from one more inversion). Here the same is done on a small
 * lattice with the same parameters. As in MILC, the lattice is an array
 * of one struct per site, even sites first, holding its four SU(3) links
 * (complex 3x3), their momenta, its colour vectors (3 complex components)
 * and work matrices; the fat and long links lie in their own array, four
 * of each per site. The D-slash onto one parity gathers the source from
 * the 8 one-link and 8 three-link neighbours through arrays of pointers
 * that every gather rewrites (as MILC's scalar gathers do); the backward
 * terms are multiplied by the adjoint links at the far sites first, into
 * 8 vectors per site, and gathered. The conjugate gradient solves
 * (4m^2 - D_eo D_oe) x = phi on the even sites from the last solution.
 * Differences: the fat link is the one-link term and the six three-link
 * staples (asqtad adds 5- and 7-link and Lepage paths), and the fermion
 * force goes through those paths and the Naik path only; the gauge action
 * is the plaquette's (su3imp's adds rectangles and parallelograms); the
 * trajectory has a few steps, not 125, and no psi-bar-psi inversion, which
 * over so few steps would weigh a third of the run rather than under a
 * hundredth; and the start is a random field near the identity (plaquette
 * about 2.42 of 3, near SPEC's 2.48), not a cold one, so that the solver
 * has work from the first step. Links move by a sixth-order Taylor
 * exponential of their momentum and are reunitarised row by row. Written
 * for spmsim's suite (configs/suite/spec-upstream.toml); usage: milc
 * [NX NY NZ NT [TRAJECS [STEPS [SEED]]]] (defaults 8 8 8 12 1 2 1; each
 * dimension even, at least 4). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SPEC's reference parameters (su3imp.in). */
#define MASS 0.0124
#define BETA 7.11
#define U0 0.8788
#define EPSILON 0.008             /* the molecular-dynamics time step */
#define MAX_CG_ITERATIONS 350
#define ERROR_PER_SITE 5e-5       /* residual of the updating inversions */
#define NFLAVORS 2
/* The fat link's one-link and staple coefficients, the Naik term's. */
#define C1 (5.0 / 8.0)
#define C3 (1.0 / (16.0 * U0 * U0))
#define CNAIK (-1.0 / (24.0 * U0 * U0))
/* The starting field's spread about the identity. */
#define START_SPREAD 0.2

typedef struct {
    double re, im;
} cplx;
typedef struct {
    cplx e[3][3];
} su3_matrix;
typedef struct {
    cplx c[3];
} su3_vector;
/* An anti-hermitian traceless matrix: the upper triangle and the
 * imaginary parts of the diagonal. */
typedef struct {
    cplx m01, m02, m12;
    double d0, d1, d2;
} anti_hermitmat;

typedef struct {
    short x, y, z, t;
    int parity; /* 0: even, 1: odd */
    int index;
    unsigned long long prn; /* the site's own random stream */
    su3_matrix link[4];
    anti_hermitmat mom[4];
    double phase[4]; /* staggered phases with the antiperiodic time boundary */
    su3_vector phi, xxx, resid, cg_p, ttt, g_rand;
    su3_matrix staple, tempmat1, tempmat2;
} site;

/* Directions: 0-3 one link forward (x, y, z, t), 4-7 one link back,
 * 8-11 three links forward, 12-15 three links back. */
#define BACK(d) ((d) + 4)
#define THREE(d) ((d) + 8)
#define NDIRS 16

static int dims[4];
static int volume, half;
static site *lattice;
static su3_matrix *fatlink, *longlink; /* four of each per site */
static su3_vector *backvec;            /* eight per site: the D-slash's backward products */
static int *neighbor[NDIRS];
static const char **gen_pt[NDIRS]; /* gathers' results, one array of pointers per slot */

#define FORSOMEPARITY(i, s, par) \
    for (i = (par) ? half : 0, s = &lattice[i]; i < ((par) ? volume : half); i++, s++)
#define FORALLSITES(i, s) for (i = 0, s = lattice; i < volume; i++, s++)
#define FIELD(s, off) ((su3_vector *)((char *)(s) + (off)))
#define EVEN 0
#define ODD 1
#define EVENANDODD 2

/* ------------------------------------------------------------ random numbers */

static unsigned long long splitmix(unsigned long long *state) {
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double site_uniform(site *s) {
    unsigned long long r = s->prn;
    r ^= r >> 12;
    r ^= r << 25;
    r ^= r >> 27;
    s->prn = r;
    return ((double)((r * 2685821657736338717ULL) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* A normal deviate (Box and Muller, one of the pair). */
static double site_gaussian(site *s) {
    double u = site_uniform(s), v = site_uniform(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ------------------------------------------------------------ SU(3) algebra */

static inline cplx cmul(cplx a, cplx b) {
    cplx c = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return c;
}
/* conj(a) * b */
static inline cplx cmul_conj(cplx a, cplx b) {
    cplx c = {a.re * b.re + a.im * b.im, a.re * b.im - a.im * b.re};
    return c;
}

/* The sum over k of x_k y_k, x and y complex, with each factor given by
 * its real and imaginary parts: RE3 the real part of the sum, IM3 the
 * imaginary. */
#define RE3(xr0, xi0, yr0, yi0, xr1, xi1, yr1, yi1, xr2, xi2, yr2, yi2) \
    ((xr0) * (yr0) - (xi0) * (yi0) + (xr1) * (yr1) - (xi1) * (yi1) + (xr2) * (yr2) - (xi2) * (yi2))
#define IM3(xr0, xi0, yr0, yi0, xr1, xi1, yr1, yi1, xr2, xi2, yr2, yi2) \
    ((xr0) * (yi0) + (xi0) * (yr0) + (xr1) * (yi1) + (xi1) * (yr1) + (xr2) * (yi2) + (xi2) * (yr2))

/* c = a b; a row of a times a column of b, the row held in registers */
static void mult_su3_nn(const su3_matrix *a, const su3_matrix *b, su3_matrix *c) {
    for (int i = 0; i < 3; i++) {
        double r0 = a->e[i][0].re, i0 = a->e[i][0].im, r1 = a->e[i][1].re, i1 = a->e[i][1].im;
        double r2 = a->e[i][2].re, i2 = a->e[i][2].im;
        for (int j = 0; j < 3; j++) {
            const cplx *b0 = &b->e[0][j], *b1 = &b->e[1][j], *b2 = &b->e[2][j];
            c->e[i][j].re = RE3(r0, i0, b0->re, b0->im, r1, i1, b1->re, b1->im, r2, i2, b2->re, b2->im);
            c->e[i][j].im = IM3(r0, i0, b0->re, b0->im, r1, i1, b1->re, b1->im, r2, i2, b2->re, b2->im);
        }
    }
}

/* c = a b^dagger: rows of a against rows of b, conjugated */
static void mult_su3_na(const su3_matrix *a, const su3_matrix *b, su3_matrix *c) {
    for (int i = 0; i < 3; i++) {
        double r0 = a->e[i][0].re, i0 = a->e[i][0].im, r1 = a->e[i][1].re, i1 = a->e[i][1].im;
        double r2 = a->e[i][2].re, i2 = a->e[i][2].im;
        for (int j = 0; j < 3; j++) {
            const cplx *b0 = &b->e[j][0], *b1 = &b->e[j][1], *b2 = &b->e[j][2];
            c->e[i][j].re = RE3(r0, i0, b0->re, -b0->im, r1, i1, b1->re, -b1->im, r2, i2, b2->re, -b2->im);
            c->e[i][j].im = IM3(r0, i0, b0->re, -b0->im, r1, i1, b1->re, -b1->im, r2, i2, b2->re, -b2->im);
        }
    }
}

/* c = a^dagger b: columns of a, conjugated, against columns of b */
static void mult_su3_an(const su3_matrix *a, const su3_matrix *b, su3_matrix *c) {
    for (int i = 0; i < 3; i++) {
        double r0 = a->e[0][i].re, i0 = -a->e[0][i].im, r1 = a->e[1][i].re, i1 = -a->e[1][i].im;
        double r2 = a->e[2][i].re, i2 = -a->e[2][i].im;
        for (int j = 0; j < 3; j++) {
            const cplx *b0 = &b->e[0][j], *b1 = &b->e[1][j], *b2 = &b->e[2][j];
            c->e[i][j].re = RE3(r0, i0, b0->re, b0->im, r1, i1, b1->re, b1->im, r2, i2, b2->re, b2->im);
            c->e[i][j].im = IM3(r0, i0, b0->re, b0->im, r1, i1, b1->re, b1->im, r2, i2, b2->re, b2->im);
        }
    }
}

/* c = a v */
static inline void mult_su3_mat_vec(const su3_matrix *a, const su3_vector *v, su3_vector *c) {
    double r0 = v->c[0].re, i0 = v->c[0].im, r1 = v->c[1].re, i1 = v->c[1].im, r2 = v->c[2].re, i2 = v->c[2].im;
    for (int i = 0; i < 3; i++) {
        const cplx *x = a->e[i];
        c->c[i].re = RE3(x[0].re, x[0].im, r0, i0, x[1].re, x[1].im, r1, i1, x[2].re, x[2].im, r2, i2);
        c->c[i].im = IM3(x[0].re, x[0].im, r0, i0, x[1].re, x[1].im, r1, i1, x[2].re, x[2].im, r2, i2);
    }
}

/* c = a^dagger v */
static inline void mult_adj_su3_mat_vec(const su3_matrix *a, const su3_vector *v, su3_vector *c) {
    double r0 = v->c[0].re, i0 = v->c[0].im, r1 = v->c[1].re, i1 = v->c[1].im, r2 = v->c[2].re, i2 = v->c[2].im;
    for (int i = 0; i < 3; i++) {
        const cplx *x0 = &a->e[0][i], *x1 = &a->e[1][i], *x2 = &a->e[2][i];
        c->c[i].re = RE3(x0->re, -x0->im, r0, i0, x1->re, -x1->im, r1, i1, x2->re, -x2->im, r2, i2);
        c->c[i].im = IM3(x0->re, -x0->im, r0, i0, x1->re, -x1->im, r1, i1, x2->re, -x2->im, r2, i2);
    }
}

/* c += a v */
static inline void mult_add_su3_mat_vec(const su3_matrix *a, const su3_vector *v, su3_vector *c) {
    double r0 = v->c[0].re, i0 = v->c[0].im, r1 = v->c[1].re, i1 = v->c[1].im, r2 = v->c[2].re, i2 = v->c[2].im;
    for (int i = 0; i < 3; i++) {
        const cplx *x = a->e[i];
        c->c[i].re += RE3(x[0].re, x[0].im, r0, i0, x[1].re, x[1].im, r1, i1, x[2].re, x[2].im, r2, i2);
        c->c[i].im += IM3(x[0].re, x[0].im, r0, i0, x[1].re, x[1].im, r1, i1, x[2].re, x[2].im, r2, i2);
    }
}

/* The outer product a b^dagger. */
static void su3_projector(const su3_vector *a, const su3_vector *b, su3_matrix *c) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) c->e[i][j] = cmul_conj(b->c[j], a->c[i]);
}

/* c = a + s b */
static void scalar_mult_add_su3_matrix(const su3_matrix *a, const su3_matrix *b, double s, su3_matrix *c) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            c->e[i][j].re = a->e[i][j].re + s * b->e[i][j].re;
            c->e[i][j].im = a->e[i][j].im + s * b->e[i][j].im;
        }
}

static void add_su3_matrix(const su3_matrix *a, su3_matrix *c) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            c->e[i][j].re += a->e[i][j].re;
            c->e[i][j].im += a->e[i][j].im;
        }
}

/* mom += s * (the traceless anti-hermitian part of m) */
static void add_traceless_antiherm(const su3_matrix *m, double s, anti_hermitmat *mom) {
    double tr = (m->e[0][0].im + m->e[1][1].im + m->e[2][2].im) / 3.0;
    mom->m01.re += s * 0.5 * (m->e[0][1].re - m->e[1][0].re);
    mom->m01.im += s * 0.5 * (m->e[0][1].im + m->e[1][0].im);
    mom->m02.re += s * 0.5 * (m->e[0][2].re - m->e[2][0].re);
    mom->m02.im += s * 0.5 * (m->e[0][2].im + m->e[2][0].im);
    mom->m12.re += s * 0.5 * (m->e[1][2].re - m->e[2][1].re);
    mom->m12.im += s * 0.5 * (m->e[1][2].im + m->e[2][1].im);
    mom->d0 += s * (m->e[0][0].im - tr);
    mom->d1 += s * (m->e[1][1].im - tr);
    mom->d2 += s * (m->e[2][2].im - tr);
}

static void uncompress_antiherm(const anti_hermitmat *a, su3_matrix *m) {
    m->e[0][0].re = m->e[1][1].re = m->e[2][2].re = 0;
    m->e[0][0].im = a->d0;
    m->e[1][1].im = a->d1;
    m->e[2][2].im = a->d2;
    m->e[0][1] = a->m01;
    m->e[0][2] = a->m02;
    m->e[1][2] = a->m12;
    m->e[1][0].re = -a->m01.re;
    m->e[1][0].im = a->m01.im;
    m->e[2][0].re = -a->m02.re;
    m->e[2][0].im = a->m02.im;
    m->e[2][1].re = -a->m12.re;
    m->e[2][1].im = a->m12.im;
}

/* A random anti-hermitian traceless matrix with Gaussian components of
 * variance s^2. */
static void random_antiherm(site *st, double s, anti_hermitmat *a) {
    double g0 = site_gaussian(st), g1 = site_gaussian(st);
    a->d0 = s * (g0 * 0.7071067811865476 + g1 * 0.4082482904638631);
    a->d1 = s * (-g0 * 0.7071067811865476 + g1 * 0.4082482904638631);
    a->d2 = s * (-g1 * 0.8164965809277261);
    a->m01.re = s * 0.7071067811865476 * site_gaussian(st);
    a->m01.im = s * 0.7071067811865476 * site_gaussian(st);
    a->m02.re = s * 0.7071067811865476 * site_gaussian(st);
    a->m02.im = s * 0.7071067811865476 * site_gaussian(st);
    a->m12.re = s * 0.7071067811865476 * site_gaussian(st);
    a->m12.im = s * 0.7071067811865476 * site_gaussian(st);
}

/* u = exp(eps p) u, to sixth order in Horner's form. */
static void exp_times(const anti_hermitmat *p, double eps, su3_matrix *u) {
    su3_matrix h, t, w;
    uncompress_antiherm(p, &h);
    t = *u;
    for (int k = 6; k >= 1; k--) {
        mult_su3_nn(&h, &t, &w);
        scalar_mult_add_su3_matrix(u, &w, eps / k, &t);
    }
    *u = t;
}

/* Makes u unitary with determinant one: normalises the first row, takes
 * the second orthogonal to it and normalises it, and sets the third to the
 * conjugate of their cross product. Returns how far the rows were from
 * unit length. */
static double reunitarize(su3_matrix *u) {
    cplx *r0 = u->e[0], *r1 = u->e[1], *r2 = u->e[2];
    double n0 = 0, dev;
    for (int k = 0; k < 3; k++) n0 += r0[k].re * r0[k].re + r0[k].im * r0[k].im;
    dev = fabs(n0 - 1.0);
    n0 = 1.0 / sqrt(n0);
    for (int k = 0; k < 3; k++) {
        r0[k].re *= n0;
        r0[k].im *= n0;
    }
    cplx dot = {0, 0};
    for (int k = 0; k < 3; k++) {
        cplx p = cmul_conj(r0[k], r1[k]);
        dot.re += p.re;
        dot.im += p.im;
    }
    double n1 = 0;
    for (int k = 0; k < 3; k++) {
        cplx p = cmul(dot, r0[k]);
        r1[k].re -= p.re;
        r1[k].im -= p.im;
        n1 += r1[k].re * r1[k].re + r1[k].im * r1[k].im;
    }
    if (fabs(n1 - 1.0) > dev) dev = fabs(n1 - 1.0);
    n1 = 1.0 / sqrt(n1);
    for (int k = 0; k < 3; k++) {
        r1[k].re *= n1;
        r1[k].im *= n1;
    }
    for (int k = 0; k < 3; k++) {
        int a = (k + 1) % 3, b = (k + 2) % 3;
        cplx p = cmul(r0[a], r1[b]), q = cmul(r0[b], r1[a]);
        r2[k].re = p.re - q.re;
        r2[k].im = -(p.im - q.im);
    }
    return dev;
}

static double realtrace_su3(const su3_matrix *a, const su3_matrix *b) { /* Re tr(a b^dagger) */
    double s = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) s += a->e[i][j].re * b->e[i][j].re + a->e[i][j].im * b->e[i][j].im;
    return s;
}

/* ------------------------------------------------------------ the lattice */

static int coords_index(int x, int y, int z, int t) {
    x = (x + dims[0]) % dims[0];
    y = (y + dims[1]) % dims[1];
    z = (z + dims[2]) % dims[2];
    t = (t + dims[3]) % dims[3];
    int lex = ((t * dims[2] + z) * dims[1] + y) * dims[0] + x;
    return lex / 2 + ((x + y + z + t) & 1 ? half : 0);
}

static void make_lattice(unsigned long long seed) {
    int i;
    site *s;
    for (int t = 0; t < dims[3]; t++)
        for (int z = 0; z < dims[2]; z++)
            for (int y = 0; y < dims[1]; y++)
                for (int x = 0; x < dims[0]; x++) {
                    i = coords_index(x, y, z, t);
                    s = &lattice[i];
                    s->x = (short)x;
                    s->y = (short)y;
                    s->z = (short)z;
                    s->t = (short)t;
                    s->parity = (x + y + z + t) & 1;
                    s->index = i;
                    int c[4] = {x, y, z, t};
                    for (int d = 0; d < 4; d++) {
                        int up[4] = {x, y, z, t}, down[4] = {x, y, z, t}, up3[4] = {x, y, z, t}, down3[4] = {x, y, z, t};
                        up[d]++;
                        down[d]--;
                        up3[d] += 3;
                        down3[d] -= 3;
                        neighbor[d][i] = coords_index(up[0], up[1], up[2], up[3]);
                        neighbor[BACK(d)][i] = coords_index(down[0], down[1], down[2], down[3]);
                        neighbor[THREE(d)][i] = coords_index(up3[0], up3[1], up3[2], up3[3]);
                        neighbor[BACK(THREE(d))][i] = coords_index(down3[0], down3[1], down3[2], down3[3]);
                        /* eta_mu(x) = (-1)^(x_0 + ... + x_(mu-1)) */
                        int sum = 0;
                        for (int e = 0; e < d; e++) sum += c[e];
                        s->phase[d] = sum & 1 ? -1.0 : 1.0;
                    }
                    if (t == dims[3] - 1) s->phase[3] = -s->phase[3];
                }
    /* Each site's random stream, then its links: the identity moved by a
     * random su(3) element, made unitary again. */
    unsigned long long state = seed * 0x9E3779B97F4A7C15ULL + 0x243F6A8885A308D3ULL;
    FORALLSITES(i, s) {
        s->prn = splitmix(&state) | 1;
        for (int d = 0; d < 4; d++) {
            anti_hermitmat a;
            su3_matrix *u = &s->link[d];
            memset(u, 0, sizeof *u);
            u->e[0][0].re = u->e[1][1].re = u->e[2][2].re = 1.0;
            random_antiherm(s, START_SPREAD, &a);
            exp_times(&a, 1.0, u);
            reunitarize(u);
            memset(&s->mom[d], 0, sizeof s->mom[d]);
        }
        memset(&s->xxx, 0, sizeof s->xxx);
    }
}

/* Points gen_pt[slot][i], for every site i of the parity (or all sites),
 * at the field (base + stride * j) of its neighbour j in direction dir. */
static void gather(const char *base, size_t stride, int dir, int parity, int slot) {
    int from = parity == ODD ? half : 0, to = parity == EVEN ? half : volume;
    const int *nb = neighbor[dir];
    const char **pt = gen_pt[slot];
    for (int i = from; i < to; i++) pt[i] = base + stride * (size_t)nb[i];
}

static void gather_site_field(size_t off, int dir, int parity, int slot) {
    gather((const char *)lattice + off, sizeof(site), dir, parity, slot);
}

/* ------------------------------------------------------------ fat and long links */

/* s->staple = the sum of the six staples around link mu, oriented from x
 * to x + mu; the lower ones are built at their far corner, in tempmat1,
 * and gathered. */
static void compute_staples(int mu) {
    int i;
    site *s;
    su3_matrix t1, t2;
    FORALLSITES(i, s) memset(&s->staple, 0, sizeof s->staple);
    for (int nu = 0; nu < 4; nu++) {
        if (nu == mu) continue;
        size_t link_mu = offsetof(site, link) + sizeof(su3_matrix) * (size_t)mu;
        size_t link_nu = offsetof(site, link) + sizeof(su3_matrix) * (size_t)nu;
        /* lower staple, built at its corner y = x - nu:
         * U_nu(y)^dag U_mu(y) U_nu(y + mu) */
        gather_site_field(link_nu, mu, EVENANDODD, mu);
        FORALLSITES(i, s) {
            mult_su3_an(&s->link[nu], &s->link[mu], &t1);
            mult_su3_nn(&t1, (const su3_matrix *)gen_pt[mu][i], &s->tempmat1);
        }
        gather_site_field(offsetof(site, tempmat1), BACK(nu), EVENANDODD, BACK(nu));
        gather_site_field(link_mu, nu, EVENANDODD, nu);
        /* upper staple: U_nu(x) U_mu(x + nu) U_nu(x + mu)^dag */
        FORALLSITES(i, s) {
            mult_su3_nn(&s->link[nu], (const su3_matrix *)gen_pt[nu][i], &t1);
            mult_su3_na(&t1, (const su3_matrix *)gen_pt[mu][i], &t2);
            add_su3_matrix(&t2, &s->staple);
            add_su3_matrix((const su3_matrix *)gen_pt[BACK(nu)][i], &s->staple);
        }
    }
}

/* The phase of the long link from s in direction mu: the staggered phase,
 * and -1 for a time path that crosses the antiperiodic boundary (one
 * starting on one of the last three time slices). */
static double long_phase(const site *s, int mu) {
    if (mu < 3) return s->phase[mu];
    double eta = s->t == dims[3] - 1 ? -s->phase[3] : s->phase[3];
    return s->t >= dims[3] - 3 ? -eta : eta;
}

static void scale_su3_matrix(su3_matrix *m, double p) {
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            m->e[a][b].re *= p;
            m->e[a][b].im *= p;
        }
}

/* The fat links: c1 U_mu(x) + c3 (its staples); the long links:
 * cnaik U_mu(x) U_mu(x + mu) U_mu(x + 2 mu); both with their phases. */
static void load_ferm_links(void) {
    int i;
    site *s;
    for (int mu = 0; mu < 4; mu++) {
        compute_staples(mu);
        FORALLSITES(i, s) {
            su3_matrix *f = &fatlink[4 * i + mu];
            scalar_mult_add_su3_matrix(&s->link[mu], &s->staple, C3 / C1, f);
            scale_su3_matrix(f, C1 * s->phase[mu]);
        }
        FORALLSITES(i, s) {
            const site *s1 = &lattice[neighbor[mu][i]];
            const site *s2 = &lattice[neighbor[mu][s1->index]];
            su3_matrix t1;
            su3_matrix *l = &longlink[4 * i + mu];
            mult_su3_nn(&s->link[mu], &s1->link[mu], &t1);
            mult_su3_nn(&t1, &s2->link[mu], l);
            scale_su3_matrix(l, CNAIK * long_phase(s, mu));
        }
    }
}

/* ------------------------------------------------------------ D-slash and CG */

/* dest = D src on the sites of the parity, src read on the other parity:
 * sum over mu of fat_mu(x) src(x + mu) + long_mu(x) src(x + 3 mu)
 * - fat_mu(x - mu)^dag src(x - mu) - long_mu(x - 3 mu)^dag src(x - 3 mu). */
static void dslash(size_t src, size_t dest, int parity) {
    int i, other = !parity;
    site *s;
    for (int mu = 0; mu < 4; mu++) {
        gather_site_field(src, mu, parity, mu);
        gather_site_field(src, THREE(mu), parity, THREE(mu));
    }
    /* the backward terms, at the far sites */
    FORSOMEPARITY(i, s, other) {
        const su3_vector *v = FIELD(s, src);
        for (int mu = 0; mu < 4; mu++) {
            mult_adj_su3_mat_vec(&fatlink[4 * i + mu], v, &backvec[8 * i + mu]);
            mult_adj_su3_mat_vec(&longlink[4 * i + mu], v, &backvec[8 * i + 4 + mu]);
        }
    }
    for (int mu = 0; mu < 4; mu++) {
        gather((const char *)&backvec[mu], 8 * sizeof(su3_vector), BACK(mu), parity, BACK(mu));
        gather((const char *)&backvec[4 + mu], 8 * sizeof(su3_vector), BACK(THREE(mu)), parity, BACK(THREE(mu)));
    }
    FORSOMEPARITY(i, s, parity) {
        su3_vector sum;
        mult_su3_mat_vec(&fatlink[4 * i], (const su3_vector *)gen_pt[0][i], &sum);
        for (int mu = 1; mu < 4; mu++)
            mult_add_su3_mat_vec(&fatlink[4 * i + mu], (const su3_vector *)gen_pt[mu][i], &sum);
        for (int mu = 0; mu < 4; mu++)
            mult_add_su3_mat_vec(&longlink[4 * i + mu], (const su3_vector *)gen_pt[THREE(mu)][i], &sum);
        su3_vector *d = FIELD(s, dest);
        for (int k = 0; k < 3; k++) {
            double re = sum.c[k].re, im = sum.c[k].im;
            for (int mu = 0; mu < 4; mu++) {
                const su3_vector *b1 = (const su3_vector *)gen_pt[BACK(mu)][i];
                const su3_vector *b3 = (const su3_vector *)gen_pt[BACK(THREE(mu))][i];
                re -= b1->c[k].re + b3->c[k].re;
                im -= b1->c[k].im + b3->c[k].im;
            }
            d->c[k].re = re;
            d->c[k].im = im;
        }
    }
}

/* ttt = (4 m^2 - D_eo D_oe) v on the even sites; returns Re <v, ttt>. */
static double apply_normal_op(size_t v) {
    const double msq_x4 = 4.0 * MASS * MASS;
    int i;
    site *s;
    double pkp = 0;
    dslash(v, offsetof(site, ttt), ODD);
    dslash(offsetof(site, ttt), offsetof(site, ttt), EVEN);
    FORSOMEPARITY(i, s, EVEN) {
        const su3_vector *p = FIELD(s, v);
        for (int k = 0; k < 3; k++) {
            s->ttt.c[k].re = msq_x4 * p->c[k].re - s->ttt.c[k].re;
            s->ttt.c[k].im = msq_x4 * p->c[k].im - s->ttt.c[k].im;
            pkp += p->c[k].re * s->ttt.c[k].re + p->c[k].im * s->ttt.c[k].im;
        }
    }
    return pkp;
}

/* Solves (4 m^2 - D_eo D_oe) xxx = src on the even sites by conjugate
 * gradient from the xxx there, to a residual of error_per_site relative to
 * the source or the iteration limit; returns the iterations done. */
static int congrad(size_t src, double error_per_site, int max_iterations, double *final_rsq) {
    int i, iterations = 0;
    site *s;
    double source_norm = 0, rsq = 0;
    FORSOMEPARITY(i, s, EVEN) {
        const su3_vector *f = FIELD(s, src);
        for (int k = 0; k < 3; k++) source_norm += f->c[k].re * f->c[k].re + f->c[k].im * f->c[k].im;
    }
    double rsqstop = error_per_site * error_per_site * source_norm;
    apply_normal_op(offsetof(site, xxx));
    FORSOMEPARITY(i, s, EVEN) {
        const su3_vector *f = FIELD(s, src);
        for (int k = 0; k < 3; k++) {
            s->resid.c[k].re = f->c[k].re - s->ttt.c[k].re;
            s->resid.c[k].im = f->c[k].im - s->ttt.c[k].im;
            rsq += s->resid.c[k].re * s->resid.c[k].re + s->resid.c[k].im * s->resid.c[k].im;
        }
        s->cg_p = s->resid;
    }
    while (rsq > rsqstop && iterations < max_iterations) {
        iterations++;
        double pkp = apply_normal_op(offsetof(site, cg_p));
        double a = rsq / pkp, rsqnew = 0;
        FORSOMEPARITY(i, s, EVEN) {
            for (int k = 0; k < 3; k++) {
                s->xxx.c[k].re += a * s->cg_p.c[k].re;
                s->xxx.c[k].im += a * s->cg_p.c[k].im;
                s->resid.c[k].re -= a * s->ttt.c[k].re;
                s->resid.c[k].im -= a * s->ttt.c[k].im;
                rsqnew += s->resid.c[k].re * s->resid.c[k].re + s->resid.c[k].im * s->resid.c[k].im;
            }
        }
        double b = rsqnew / rsq;
        rsq = rsqnew;
        FORSOMEPARITY(i, s, EVEN) {
            for (int k = 0; k < 3; k++) {
                s->cg_p.c[k].re = s->resid.c[k].re + b * s->cg_p.c[k].re;
                s->cg_p.c[k].im = s->resid.c[k].im + b * s->cg_p.c[k].im;
            }
        }
    }
    *final_rsq = source_norm > 0 ? rsq / source_norm : 0;
    return iterations;
}

/* g_rand Gaussian everywhere, phi = M^dag g_rand = 2m g_rand - D_eo g_rand
 * on the even sites. */
static void grsource(void) {
    int i;
    site *s;
    FORALLSITES(i, s) {
        for (int k = 0; k < 3; k++) {
            s->g_rand.c[k].re = site_gaussian(s) * 0.7071067811865476;
            s->g_rand.c[k].im = site_gaussian(s) * 0.7071067811865476;
        }
    }
    dslash(offsetof(site, g_rand), offsetof(site, phi), EVEN);
    FORSOMEPARITY(i, s, EVEN) {
        for (int k = 0; k < 3; k++) {
            s->phi.c[k].re = 2.0 * MASS * s->g_rand.c[k].re - s->phi.c[k].re;
            s->phi.c[k].im = 2.0 * MASS * s->g_rand.c[k].im - s->phi.c[k].im;
        }
    }
}

/* ------------------------------------------------------------ forces and updates */

/* c += a^dagger */
static void add_adjoint_su3_matrix(const su3_matrix *a, su3_matrix *c) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            c->e[i][j].re += a->e[j][i].re;
            c->e[i][j].im -= a->e[j][i].im;
        }
}

/* The force through the staples in plane (mu, nu) of the fat link in
 * direction mu, whose outer product T(x) is in tempmat1: the derivative of
 * Re tr(S(x) T(x)) for the upper staple S(x) = U_nu(x) U_mu(x + nu)
 * U_nu(x + mu)^dag and the lower one U_nu(x - nu)^dag U_mu(x - nu)
 * U_nu(x - nu + mu), for each of their three links. The terms for links at
 * the corner are made there; those for links one step on are made at the
 * corner, left in tempmat2 and staple, and gathered. */
static void staple_force(int mu, int nu, double k) {
    int i;
    site *s;
    size_t link_mu = offsetof(site, link) + sizeof(su3_matrix) * (size_t)mu;
    size_t link_nu = offsetof(site, link) + sizeof(su3_matrix) * (size_t)nu;
    gather_site_field(link_mu, nu, EVENANDODD, 0);
    gather_site_field(link_nu, mu, EVENANDODD, 1);
    gather_site_field(offsetof(site, tempmat1), nu, EVENANDODD, 2);
    FORALLSITES(i, s) {
        const su3_matrix *umu_nu = (const su3_matrix *)gen_pt[0][i]; /* U_mu(x + nu) */
        const su3_matrix *unu_mu = (const su3_matrix *)gen_pt[1][i]; /* U_nu(x + mu) */
        const su3_matrix *t_nu = (const su3_matrix *)gen_pt[2][i];   /* T(x + nu) */
        const su3_matrix *t = &s->tempmat1, *umu = &s->link[mu], *unu = &s->link[nu];
        su3_matrix a, b, c, f;
        /* U_nu(x), as the upper staple's first link: U_mu(x + nu) U_nu(x + mu)^dag T(x);
         * as the lower staple's first (from x + nu): (U_mu(x) U_nu(x + mu) T(x + nu))^dag */
        mult_su3_na(umu_nu, unu_mu, &a);
        mult_su3_nn(&a, t, &b);
        mult_su3_nn(unu_mu, t_nu, &c);
        mult_su3_nn(umu, &c, &a);
        mult_su3_nn(unu, &b, &f);
        mult_su3_na(unu, &a, &b);
        add_su3_matrix(&b, &f);
        add_traceless_antiherm(&f, k, &s->mom[nu]);
        /* U_mu(x), as the lower staple's middle link (from x + nu):
         * U_nu(x + mu) T(x + nu) U_nu(x)^dag */
        mult_su3_na(&c, unu, &a);
        mult_su3_nn(umu, &a, &f);
        add_traceless_antiherm(&f, k, &s->mom[mu]);
        /* for U_mu(x + nu), the upper staple's middle link:
         * U_nu(x + mu)^dag T(x) U_nu(x) */
        mult_su3_an(unu_mu, t, &a);
        mult_su3_nn(&a, unu, &s->tempmat2);
        /* for U_nu(x + mu), the upper staple's last link, (T(x) U_nu(x)
         * U_mu(x + nu))^dag, and the lower staple's (from x + nu),
         * T(x + nu) U_nu(x)^dag U_mu(x) */
        mult_su3_nn(t, unu, &a);
        mult_su3_nn(&a, umu_nu, &b);
        mult_su3_na(t_nu, unu, &a);
        mult_su3_nn(&a, umu, &s->staple);
        add_adjoint_su3_matrix(&b, &s->staple);
    }
    gather_site_field(offsetof(site, tempmat2), BACK(nu), EVENANDODD, 3);
    gather_site_field(offsetof(site, staple), BACK(mu), EVENANDODD, 4);
    FORALLSITES(i, s) {
        su3_matrix f;
        mult_su3_nn(&s->link[mu], (const su3_matrix *)gen_pt[3][i], &f);
        add_traceless_antiherm(&f, k, &s->mom[mu]);
        mult_su3_nn(&s->link[nu], (const su3_matrix *)gen_pt[4][i], &f);
        add_traceless_antiherm(&f, k, &s->mom[nu]);
    }
}

/* Fermion force from X = xxx (even sites) and Y = D_oe X (ttt, odd
 * sites), through the fat link's one-link and staple paths and the Naik
 * path. */
static void fermion_force(double eps) {
    const double coeff = eps * NFLAVORS / 4.0;
    int i;
    site *s;
    dslash(offsetof(site, xxx), offsetof(site, ttt), ODD);
    for (int mu = 0; mu < 4; mu++) {
        /* the outer products v(x + mu) v(x)^dag (tempmat1) and
         * v(x + 3 mu) v(x)^dag (tempmat2), v being X on even sites and Y
         * on odd ones, negated for odd x, with the links' phases */
        for (int par = EVEN; par <= ODD; par++) {
            size_t own = par == EVEN ? offsetof(site, xxx) : offsetof(site, ttt);
            size_t far = par == EVEN ? offsetof(site, ttt) : offsetof(site, xxx);
            gather_site_field(far, mu, par, mu);
            gather_site_field(far, THREE(mu), par, THREE(mu));
            double sign = par == EVEN ? 1.0 : -1.0;
            FORSOMEPARITY(i, s, par) {
                su3_projector((const su3_vector *)gen_pt[mu][i], FIELD(s, own), &s->tempmat1);
                su3_projector((const su3_vector *)gen_pt[THREE(mu)][i], FIELD(s, own), &s->tempmat2);
                scale_su3_matrix(&s->tempmat1, sign * s->phase[mu]);
                scale_su3_matrix(&s->tempmat2, sign * long_phase(s, mu));
            }
        }
        /* the force on U_mu(y): the one-link term, and the Naik path in
         * each of the three places it can hold y */
        FORALLSITES(i, s) {
            const site *up1 = &lattice[neighbor[mu][i]];
            const site *up2 = &lattice[neighbor[mu][up1->index]];
            const site *dn1 = &lattice[neighbor[BACK(mu)][i]];
            const site *dn2 = &lattice[neighbor[BACK(mu)][dn1->index]];
            su3_matrix f, t1, t2;
            /* y first: U(y + mu) U(y + 2 mu) T(y) */
            mult_su3_nn(&up1->link[mu], &up2->link[mu], &t1);
            mult_su3_nn(&t1, &s->tempmat2, &f);
            /* y second: U(y + mu) T(y - mu) U(y - mu) */
            mult_su3_nn(&up1->link[mu], &dn1->tempmat2, &t1);
            mult_su3_nn(&t1, &dn1->link[mu], &t2);
            add_su3_matrix(&t2, &f);
            /* y third: T(y - 2 mu) U(y - 2 mu) U(y - mu) */
            mult_su3_nn(&dn2->tempmat2, &dn2->link[mu], &t1);
            mult_su3_nn(&t1, &dn1->link[mu], &t2);
            add_su3_matrix(&t2, &f);
            scalar_mult_add_su3_matrix(&s->tempmat1, &f, CNAIK / C1, &t1);
            mult_su3_nn(&s->link[mu], &t1, &t2);
            add_traceless_antiherm(&t2, -coeff * C1, &s->mom[mu]);
        }
        for (int nu = 0; nu < 4; nu++)
            if (nu != mu) staple_force(mu, nu, -coeff * C3);
    }
}

static void gauge_force(double eps) {
    int i;
    site *s;
    for (int mu = 0; mu < 4; mu++) {
        compute_staples(mu);
        FORALLSITES(i, s) {
            su3_matrix t;
            mult_su3_na(&s->link[mu], &s->staple, &t);
            add_traceless_antiherm(&t, -eps * BETA / 3.0, &s->mom[mu]);
        }
    }
}

static double update_u(double eps) {
    int i;
    site *s;
    double worst = 0;
    FORALLSITES(i, s) {
        for (int mu = 0; mu < 4; mu++) {
            exp_times(&s->mom[mu], eps, &s->link[mu]);
            double dev = reunitarize(&s->link[mu]);
            if (dev > worst) worst = dev;
        }
    }
    return worst;
}

/* Gaussian momenta, at the start of a trajectory. */
static void ranmom(void) {
    int i;
    site *s;
    FORALLSITES(i, s) for (int mu = 0; mu < 4; mu++) random_antiherm(s, 1.0, &s->mom[mu]);
}

/* ------------------------------------------------------------ measurements */

static void plaquette(double *space, double *time) {
    int i;
    site *s;
    double ss = 0, st = 0;
    FORALLSITES(i, s) {
        for (int mu = 0; mu < 4; mu++)
            for (int nu = mu + 1; nu < 4; nu++) {
                su3_matrix a, b;
                /* U_mu(x) U_nu(x + mu) against U_nu(x) U_mu(x + nu) */
                mult_su3_nn(&s->link[mu], &lattice[neighbor[mu][i]].link[nu], &a);
                mult_su3_nn(&s->link[nu], &lattice[neighbor[nu][i]].link[mu], &b);
                double p = realtrace_su3(&a, &b);
                if (nu == 3)
                    st += p;
                else
                    ss += p;
            }
    }
    *space = ss / (3.0 * volume);
    *time = st / (3.0 * volume);
}

static void polyakov_loop(double *re, double *im) {
    int i;
    site *s;
    double sr = 0, si = 0;
    FORALLSITES(i, s) {
        if (s->t != 0) continue;
        su3_matrix p = s->link[3], q;
        int j = neighbor[3][i];
        for (int t = 1; t < dims[3]; t++) {
            mult_su3_nn(&p, &lattice[j].link[3], &q);
            p = q;
            j = neighbor[3][j];
        }
        sr += p.e[0][0].re + p.e[1][1].re + p.e[2][2].re;
        si += p.e[0][0].im + p.e[1][1].im + p.e[2][2].im;
    }
    int spatial = volume / dims[3];
    *re = sr / (3.0 * spatial);
    *im = si / (3.0 * spatial);
}

/* The momenta's kinetic energy, -tr(P^2)/2, per link. */
static double kinetic_energy(void) {
    int i;
    site *s;
    double sum = 0;
    FORALLSITES(i, s) {
        for (int mu = 0; mu < 4; mu++) {
            const anti_hermitmat *p = &s->mom[mu];
            sum += 0.5 * (p->d0 * p->d0 + p->d1 * p->d1 + p->d2 * p->d2) + p->m01.re * p->m01.re +
                   p->m01.im * p->m01.im + p->m02.re * p->m02.re + p->m02.im * p->m02.im + p->m12.re * p->m12.re +
                   p->m12.im * p->m12.im;
        }
    }
    return sum / (4.0 * volume);
}

/* FNV-1a over the links' bits, a 64-bit word at a time. */
static unsigned long long link_checksum(void) {
    unsigned long long h = 1469598103934665603ULL;
    int i;
    site *s;
    FORALLSITES(i, s) {
        const unsigned char *p = (const unsigned char *)s->link;
        for (size_t k = 0; k + 8 <= sizeof s->link; k += 8) {
            unsigned long long w;
            memcpy(&w, p + k, 8);
            h = (h ^ w) * 1099511628211ULL;
        }
    }
    return h;
}

int main(int argc, char **argv) {
    int nx = 8, ny = 8, nz = 8, nt = 12, trajecs = 1, steps = 2;
    unsigned long long seed = 1;
    if (argc > 8 || argc == 2 || argc == 3 || argc == 4) {
        fprintf(stderr, "usage: %s [NX NY NZ NT [TRAJECS [STEPS [SEED]]]]\n", argv[0]);
        return 2;
    }
    if (argc > 4) {
        nx = atoi(argv[1]);
        ny = atoi(argv[2]);
        nz = atoi(argv[3]);
        nt = atoi(argv[4]);
    }
    if (argc > 5) trajecs = atoi(argv[5]);
    if (argc > 6) steps = atoi(argv[6]);
    if (argc > 7) seed = strtoull(argv[7], NULL, 10);
    dims[0] = nx;
    dims[1] = ny;
    dims[2] = nz;
    dims[3] = nt;
    for (int d = 0; d < 4; d++)
        if (dims[d] < 4 || dims[d] > 64 || dims[d] % 2) {
            fprintf(stderr, "each dimension even, from 4 to 64\n");
            return 2;
        }
    if (trajecs < 0 || steps < 0) {
        fprintf(stderr, "TRAJECS and STEPS not negative\n");
        return 2;
    }
    volume = nx * ny * nz * nt;
    half = volume / 2;
    lattice = malloc(sizeof(site) * (size_t)volume);
    fatlink = malloc(sizeof(su3_matrix) * 4 * (size_t)volume);
    longlink = malloc(sizeof(su3_matrix) * 4 * (size_t)volume);
    backvec = malloc(sizeof(su3_vector) * 8 * (size_t)volume);
    int ok = lattice && fatlink && longlink && backvec;
    for (int d = 0; d < NDIRS; d++) {
        neighbor[d] = malloc(sizeof(int) * (size_t)volume);
        gen_pt[d] = malloc(sizeof(char *) * (size_t)volume);
        ok = ok && neighbor[d] && gen_pt[d];
    }
    if (!ok) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    make_lattice(seed);
    printf("lattice %dx%dx%dx%d (%d sites, %zu bytes each), trajectories %d of %d steps, mass %g, beta %g\n", nx, ny, nz,
           nt, volume, sizeof(site), trajecs, steps, MASS, BETA);

    long total_iterations = 0;
    double worst_unitarity = 0;
    for (int traj = 0; traj < trajecs; traj++) {
        ranmom();
        for (int step = 0; step < steps; step++) {
            double rsq;
            load_ferm_links();
            grsource();
            int it = congrad(offsetof(site, phi), ERROR_PER_SITE, MAX_CG_ITERATIONS, &rsq);
            total_iterations += it;
            printf("traj %d step %d: CG %d iterations, residual %.3e\n", traj, step, it, sqrt(rsq));
            fermion_force(EPSILON);
            gauge_force(EPSILON);
            double dev = update_u(EPSILON);
            if (dev > worst_unitarity) worst_unitarity = dev;
        }
        double ps, pt, lr, li;
        plaquette(&ps, &pt);
        polyakov_loop(&lr, &li);
        printf("PLAQ: %.9f %.9f\nP_LOOP: %.9e %.9e\nMOM: %.9f\n", ps, pt, lr, li, kinetic_energy());
    }
    printf("CG iterations %ld, worst unitarity drift %.3e\n", total_iterations, worst_unitarity);
    printf("checksum %016llx\n", link_checksum());
    return 0;
}
