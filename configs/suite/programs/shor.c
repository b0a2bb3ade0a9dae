/* The core of Shor's factoring algorithm on libquantum, the library SPEC
 * CPU2006's 462.libquantum is built on: a superposition of every input
 * value, the modular exponentiation x^a mod N into a scratch register
 * (Toffoli and CNOT gates, each a sweep over the whole state vector), then
 * the quantum Fourier transform and a measurement. The superposition is
 * written into the register directly (the state a Walsh-Hadamard transform
 * of |0> gives, without the hash-table work of 2^width gate applications),
 * so the run reaches the exponentiation early. Written for spmsim's
 * suite (configs/suite/memory-intensive.toml); usage: shor N X [SEED]. */
#include <math.h>
#include <quantum.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s N X [SEED]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    int x = atoi(argv[2]);
    srand(argc > 3 ? (unsigned)atoi(argv[3]) : 1u);
    if (n < 15 || x < 2 || x >= n || quantum_gcd(n, x) != 1) {
        fprintf(stderr, "N must be at least 15 and X a unit mod N\n");
        return 2;
    }
    int width = quantum_getwidth(n * n);
    int swidth = quantum_getwidth(n);
    quantum_reg reg = quantum_new_qureg(0, width);
    int states = 1 << width;
    COMPLEX_FLOAT *amplitude = realloc(reg.amplitude, (size_t)states * sizeof(COMPLEX_FLOAT));
    MAX_UNSIGNED *state = realloc(reg.state, (size_t)states * sizeof(MAX_UNSIGNED));
    if (!amplitude || !state) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    reg.amplitude = amplitude;
    reg.state = state;
    reg.size = states;
    float a = (float)(1.0 / sqrt((double)states));
    for (int i = 0; i < states; i++) {
        reg.state[i] = (MAX_UNSIGNED)i;
        reg.amplitude[i] = a;
    }
    quantum_addscratch(3 * swidth + 2, &reg);
    quantum_exp_mod_n(n, x, width, swidth, &reg);
    for (int i = 0; i < 3 * swidth + 2; i++) {
        quantum_bmeasure(0, &reg);
    }
    quantum_qft(width, &reg);
    MAX_UNSIGNED c = quantum_measure(reg);
    printf("states %d, measured %llu\n", reg.size, (unsigned long long)c);
    quantum_delete_qureg(&reg);
    return 0;
}
