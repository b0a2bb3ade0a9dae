/* Minimum-cost flow in the manner of SPEC CPU2006's 429.mcf, which
 * schedules vehicles by a min-cost flow over a network of timetabled
 * trips: here a generated timetable (each trip may be followed by a few
 * later trips, at the cost of the dead-heading between them; depot arcs
 * start and end every duty) solved by successive shortest paths, each path
 * found by a queue-based Bellman-Ford over the residual network. The work
 * is mcf's kind: sweeps over node and arc records far larger than the
 * caches, following arc lists from node to node. Written for spmsim's
 * suite (configs/suite/memory-intensive.toml); usage: mcf TRIPS FOLLOWERS
 * VEHICLES SEED. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    long dist;      /* path cost from the depot, this round */
    long potential; /* total of the rounds' distances (for the report) */
    int pred_arc;   /* the arc the shortest path arrives by */
    int first_out;  /* the first residual arc out of the node */
    int queued;     /* in the Bellman-Ford queue */
    int rounds;     /* rounds that reached the node */
    long start_time, end_time;
} Node;

typedef struct {
    int head, next_out;
    long cost, residual;
} Arc;

static Node *nodes;
static Arc *arcs;
static int n_arcs;

static unsigned long long rng_state;
static unsigned next_random(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 33);
}

/* An arc and its reverse (residual 0), as a pair: arc a's reverse is a ^ 1. */
static void add_arc(int from, int to, long cost, long capacity) {
    arcs[n_arcs] = (Arc){to, nodes[from].first_out, cost, capacity};
    nodes[from].first_out = n_arcs++;
    arcs[n_arcs] = (Arc){from, nodes[to].first_out, -cost, 0};
    nodes[to].first_out = n_arcs++;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s TRIPS FOLLOWERS VEHICLES SEED\n", argv[0]);
        return 2;
    }
    int trips = atoi(argv[1]), followers = atoi(argv[2]), vehicles = atoi(argv[3]);
    rng_state = (unsigned long long)atoll(argv[4]);
    if (trips < 2 || followers < 1 || vehicles < 0) {
        fprintf(stderr, "TRIPS at least 2, FOLLOWERS at least 1, VEHICLES not negative\n");
        return 2;
    }
    /* Node 0 is the depot's source, node 1 its sink; trip t is node t + 2. */
    int n = trips + 2;
    long max_arcs = 2L * ((long)trips * (followers + 2) + 1);
    nodes = calloc(n, sizeof(Node));
    arcs = malloc(sizeof(Arc) * max_arcs);
    int *queue = malloc(sizeof(int) * n);
    if (!nodes || !arcs || !queue) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int v = 0; v < n; v++) nodes[v].first_out = -1;
    /* Trips start through the day in order; each lasts up to two hours. */
    for (int t = 0; t < trips; t++) {
        nodes[t + 2].start_time = (long)t * 86400 / trips;
        nodes[t + 2].end_time = nodes[t + 2].start_time + 600 + next_random() % 6600;
    }
    for (int t = 0; t < trips; t++) {
        add_arc(0, t + 2, 10000 + next_random() % 1000, 1); /* pull-out */
        add_arc(t + 2, 1, 500 + next_random() % 1000, 1);   /* pull-in */
        for (int k = 0; k < followers; k++) {
            /* A later trip, nearer ones more likely. */
            int u = t + 1 + (int)(next_random() % (1 + next_random() % 4096));
            if (u >= trips || nodes[u + 2].start_time < nodes[t + 2].end_time) continue;
            long idle = nodes[u + 2].start_time - nodes[t + 2].end_time;
            add_arc(t + 2, u + 2, idle / 60 + next_random() % 300, 1);
        }
    }
    add_arc(0, 1, 1000000, vehicles); /* a vehicle left unused */
    long total = 0;
    for (int round = 0; round < vehicles; round++) {
        for (int v = 0; v < n; v++) {
            nodes[v].dist = LONG_MAX;
            nodes[v].pred_arc = -1;
        }
        nodes[0].dist = 0;
        int head = 0, tail = 0, queued = 1;
        queue[tail++] = 0;
        nodes[0].queued = 1;
        while (queued > 0) {
            int v = queue[head];
            head = head + 1 == n ? 0 : head + 1;
            queued--;
            nodes[v].queued = 0;
            for (int a = nodes[v].first_out; a >= 0; a = arcs[a].next_out) {
                if (arcs[a].residual <= 0) continue;
                int w = arcs[a].head;
                long d = nodes[v].dist + arcs[a].cost;
                if (d < nodes[w].dist) {
                    nodes[w].dist = d;
                    nodes[w].pred_arc = a;
                    if (!nodes[w].queued) {
                        nodes[w].queued = 1;
                        queue[tail] = w;
                        tail = tail + 1 == n ? 0 : tail + 1;
                        queued++;
                    }
                }
            }
        }
        if (nodes[1].dist == LONG_MAX) break;
        /* One vehicle along the cheapest duty. */
        for (int v = 1; v != 0;) {
            int a = nodes[v].pred_arc;
            arcs[a].residual--;
            arcs[a ^ 1].residual++;
            v = arcs[a ^ 1].head;
        }
        total += nodes[1].dist;
        for (int v = 0; v < n; v++)
            if (nodes[v].dist != LONG_MAX) {
                nodes[v].potential += nodes[v].dist;
                nodes[v].rounds++;
            }
    }
    printf("trips %d, arcs %d, cost %ld\n", trips, n_arcs, total);
    return 0;
}
