/* Grid path finding in the manner of SPEC CPU2006's 473.astar, which is
 * built on Rainer Menes's path-finding library for game AI. Its reference
 * inputs (BigLakes2048.cfg, rivers.cfg) are 2-D terrain maps, BigLakes's
 * 2048x2048, with lakes and rivers as impassable or costly cells, and many
 * start-to-goal queries on them; it answers them with A* (a binary-heap
 * open list over the grid's cells), and with a region-based variant that
 * splits the map into connected regions by a flood fill, finds a route
 * over the graph of regions and then refines it cell by cell. Here the
 * map is generated: terrain costs from two octaves of value noise, lakes
 * stamped along random walks, meandering rivers of a few hundred cells
 * with passable but costly fords. A flood fill labels the connected
 * regions, which tell at once whether a goal can be reached; each query
 * picks a start and a goal in the same region, from a few cells to an
 * eighth of the map apart, and runs A* over the 8 neighbours (no cutting
 * of corners past water) with the octile-distance heuristic and a binary
 * heap whose decrease-key finds the cell through its heap index, then
 * walks the path back. Per-cell search state (cost so far, arriving
 * direction, heap index) is reset lazily, as path finders do: a cell
 * belongs to the current search only if it carries the query's generation
 * number. The work is astar's kind: a large array of cells whose state is
 * written wherever the searches go, scattered over the map, and a heap
 * that moves entries on every step. Most queries are short; the few whose
 * goal lies beyond a lake search much of the map. Written for spmsim's
 * suite (configs/suite/spec-upstream.toml); usage: astar WIDTH HEIGHT
 * QUERIES SEED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned generation; /* the query that last reached the cell (0: none) */
    int g;               /* the cheapest cost found to it, this query */
    int heap_index;      /* its place in the open list; -1 once closed */
    unsigned char from;  /* the direction it was entered by (8: the start) */
} CellState;

typedef struct {
    unsigned long long key; /* f = g + h above, h below: ties go to the nearer */
    int cell;
} HeapEntry;

static int width, height;
static unsigned char *terrain; /* 0: water, else the cost of entering the cell */
static int *region;            /* connected region of a dry cell; -1 for water */
static CellState *state;
static HeapEntry *heap;
static int heap_size;

/* Directions: even ones straight, odd ones diagonal (between d - 1 and d + 1). */
static const int dx8[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int dy8[8] = {0, 1, 1, 1, 0, -1, -1, -1};
static int offset8[8];

static unsigned long long rng_state;
static unsigned next_random(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (unsigned)((rng_state * 2685821657736338717ULL) >> 32);
}
static int random_below(int n) {
    return (int)(next_random() % (unsigned)n);
}

static int clamp(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* Sets the cells within radius r of (x, y) to cost; with only_water, only
 * the water among them. The map's border stays water. */
static void stamp(int x, int y, int r, unsigned char cost, int only_water) {
    int half = r;
    for (int v = y - r; v <= y + r; v++) {
        int dy = v - y;
        while (half * half + dy * dy > r * r) half--;
        while ((half + 1) * (half + 1) + dy * dy <= r * r) half++;
        if (v < 1 || v > height - 2) continue;
        int from = x - half < 1 ? 1 : x - half, to = x + half > width - 2 ? width - 2 : x + half;
        unsigned char *row = &terrain[(long)v * width];
        if (!only_water)
            memset(row + from, cost, to >= from ? (size_t)(to - from + 1) : 0);
        else
            for (int u = from; u <= to; u++)
                if (row[u] == 0) row[u] = cost;
    }
}

/* Value noise: random heights 0..255 on a lattice every 2^shift cells,
 * interpolated bilinearly. */
typedef struct {
    int shift, columns;
    unsigned char *lattice;
    int *row; /* the lattice's columns interpolated to the current row, << shift */
} Noise;

static void noise_init(Noise *n, int shift) {
    n->shift = shift;
    n->columns = (width >> shift) + 2;
    int rows = (height >> shift) + 2;
    n->lattice = malloc((size_t)n->columns * rows);
    n->row = malloc(sizeof(int) * n->columns);
    if (!n->lattice || !n->row) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (long i = 0; i < (long)n->columns * rows; i++) n->lattice[i] = (unsigned char)(next_random() >> 24);
}

/* Adds weight times the height along row y to sum[0 .. width - 1]. */
static void noise_add_row(Noise *n, int y, int weight, int *sum) {
    int shift = n->shift, spacing = 1 << shift, fy = y & (spacing - 1);
    const unsigned char *above = &n->lattice[(long)(y >> shift) * n->columns], *below = above + n->columns;
    for (int i = 0; i < n->columns; i++) n->row[i] = above[i] * (spacing - fy) + below[i] * fy;
    for (int i = 0, x = 0; x < width; i++) {
        int value = n->row[i] << shift, slope = n->row[i + 1] - n->row[i];
        for (int end = x + spacing < width ? x + spacing : width; x < end; x++) {
            sum[x] += weight * (value >> 2 * shift);
            value += slope;
        }
    }
}

static void generate_map(void) {
    /* Terrain: the height is two parts coarse noise (lattice 128) to one
     * part fine (16), 0 to 765; two cells in three, the lower ones, are open
     * ground (cost 1), the rest hills of cost 2 to 6. */
    unsigned char cost_of_height[3 * 256];
    for (int v = 0; v < 3 * 256; v++) cost_of_height[v] = (unsigned char)(v < 430 ? 1 : clamp(2 + (v - 430) / 60, 2, 6));
    Noise coarse, fine;
    noise_init(&coarse, 7);
    noise_init(&fine, 4);
    int *sum = malloc(sizeof(int) * width);
    if (!sum) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int y = 0; y < height; y++) {
        unsigned char *row = &terrain[(long)y * width];
        for (int x = 0; x < width; x++) sum[x] = 0;
        noise_add_row(&coarse, y, 2, sum);
        noise_add_row(&fine, y, 1, sum);
        for (int x = 0; x < width; x++) row[x] = y == 0 || y == height - 1 ? 0 : cost_of_height[sum[x]];
        row[0] = row[width - 1] = 0;
    }
    free(sum);
    free(coarse.lattice);
    free(coarse.row);
    free(fine.lattice);
    free(fine.row);
    /* Lakes, of four sizes: discs stamped along random walks. */
    int lakes = (int)((long)width * height / 60000) + 1;
    for (int l = 0; l < lakes; l++) {
        int x = 1 + random_below(width - 2), y = 1 + random_below(height - 2);
        int scale = random_below(4), steps = 20 << scale, size = 4 << scale;
        for (int s = 0; s < steps; s++) {
            x = clamp(x + random_below(size + 1) - size / 2, 1, width - 2);
            y = clamp(y + random_below(size + 1) - size / 2, 1, height - 2);
            stamp(x, y, size / 2 + random_below(size), 0, 0);
        }
    }
    /* Rivers, three cells wide, meandering down or across the map (in
     * turn) from a random source for 128 cells to half the map, with a
     * ford every hundred or so cells: fords are passable but dear. */
    int rivers = (width + height) / 128 + 1;
    int longest = width > height ? width : height;
    int *path_x = malloc(sizeof(int) * longest), *path_y = malloc(sizeof(int) * longest);
    if (!path_x || !path_y) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int r = 0; r < rivers; r++) {
        int down = r % 2 == 0;
        int along = down ? height : width, across = down ? width : height;
        int p = random_below(along), q = 1 + random_below(across - 2), drift = 0;
        int length = 128 + random_below(longest / 2);
        if (length > along - p) length = along - p;
        for (int i = 0; i < length; i++, p++) {
            if (random_below(4) == 0) drift = clamp(drift + random_below(3) - 1, -1, 1);
            q = clamp(q + drift, 1, across - 2);
            path_x[i] = down ? q : p;
            path_y[i] = down ? p : q;
            stamp(path_x[i], path_y[i], 1, 0, 0);
        }
        for (int i = random_below(100); i < length; i += 50 + random_below(100))
            stamp(path_x[i], path_y[i], 2, 5, 1);
    }
    free(path_x);
    free(path_y);
}

/* Labels the 4-connected regions of dry cells (with no cutting of corners,
 * the cells a walker can reach); returns how many, the count of water
 * cells in *water and the largest region's size in *largest. */
static int label_regions(long *water, long *largest) {
    long cells = (long)width * height;
    int *stack = malloc(sizeof(int) * cells);
    if (!stack) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (long c = 0; c < cells; c++) region[c] = -1;
    int regions = 0;
    *water = *largest = 0;
    for (long c = 0; c < cells; c++) {
        if (!terrain[c]) {
            ++*water;
            continue;
        }
        if (region[c] >= 0) continue;
        long size = 0, top = 0;
        region[c] = regions;
        stack[top++] = (int)c;
        while (top > 0) {
            int v = stack[--top];
            size++;
            for (int d = 0; d < 8; d += 2) {
                int n = v + offset8[d];
                if (terrain[n] && region[n] < 0) {
                    region[n] = regions;
                    stack[top++] = n;
                }
            }
        }
        if (size > *largest) *largest = size;
        regions++;
    }
    free(stack);
    return regions;
}

/* Octile distance, in the costs' units: 10 a straight step, 14 a diagonal one. */
static int heuristic(int x, int y, int gx, int gy) {
    int dx = abs(x - gx), dy = abs(y - gy);
    return dx > dy ? 10 * dx + 4 * dy : 10 * dy + 4 * dx;
}

static unsigned long long heap_key(int g, int h) {
    return (unsigned long long)(g + h) << 32 | (unsigned)h;
}

static void heap_put(int i, HeapEntry e) {
    heap[i] = e;
    state[e.cell].heap_index = i;
}

/* Moves e up from place i (a new entry, or one whose key has dropped). */
static void sift_up(int i, HeapEntry e) {
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (heap[parent].key <= e.key) break;
        heap_put(i, heap[parent]);
        i = parent;
    }
    heap_put(i, e);
}

static int pop_min(void) {
    int cell = heap[0].cell;
    HeapEntry last = heap[--heap_size];
    if (heap_size > 0) {
        int i = 0;
        for (;;) {
            int child = 2 * i + 1;
            if (child >= heap_size) break;
            if (child + 1 < heap_size && heap[child + 1].key < heap[child].key) child++;
            if (last.key <= heap[child].key) break;
            heap_put(i, heap[child]);
            i = child;
        }
        heap_put(i, last);
    }
    state[cell].heap_index = -1;
    return cell;
}

/* A* from start to goal; returns the path's cost (-1 if none) and counts
 * the cells it closes in *expanded. */
static int find_path(int start, int goal, unsigned generation, long *expanded) {
    int gx = goal % width, gy = goal / width;
    heap_size = 0;
    state[start].generation = generation;
    state[start].g = 0;
    state[start].from = 8;
    sift_up(heap_size++, (HeapEntry){heap_key(0, heuristic(start % width, start / width, gx, gy)), start});
    while (heap_size > 0) {
        int c = pop_min();
        ++*expanded;
        if (c == goal) return state[c].g;
        int x = c % width, y = c / width, g_here = state[c].g;
        for (int d = 0; d < 8; d++) {
            int n = c + offset8[d];
            int cost = terrain[n];
            if (!cost) continue;
            if (d & 1) {
                if (!terrain[c + offset8[(d + 7) & 7]] || !terrain[c + offset8[(d + 1) & 7]]) continue;
                cost *= 14;
            } else {
                cost *= 10;
            }
            int g = g_here + cost;
            CellState *s = &state[n];
            if (s->generation != generation) {
                s->generation = generation;
                s->g = g;
                s->from = (unsigned char)d;
                sift_up(heap_size++, (HeapEntry){heap_key(g, heuristic(x + dx8[d], y + dy8[d], gx, gy)), n});
            } else if (s->heap_index >= 0 && g < s->g) {
                s->g = g;
                s->from = (unsigned char)d;
                sift_up(s->heap_index, (HeapEntry){heap_key(g, heuristic(x + dx8[d], y + dy8[d], gx, gy)), n});
            }
        }
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s WIDTH HEIGHT QUERIES SEED\n", argv[0]);
        return 2;
    }
    width = atoi(argv[1]);
    height = atoi(argv[2]);
    int queries = atoi(argv[3]);
    rng_state = (unsigned long long)atoll(argv[4]) * 0x9E3779B97F4A7C15ULL + 1;
    if (width < 64 || height < 64 || (long)width * height > 1L << 24 || queries < 0) {
        fprintf(stderr, "WIDTH and HEIGHT at least 64 (at most 2^24 cells), QUERIES not negative\n");
        return 2;
    }
    long cells = (long)width * height;
    terrain = malloc(cells);
    region = malloc(sizeof(int) * cells);
    state = calloc(cells, sizeof(CellState));
    heap = malloc(sizeof(HeapEntry) * cells);
    if (!terrain || !region || !state || !heap) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int d = 0; d < 8; d++) offset8[d] = dy8[d] * width + dx8[d];
    generate_map();
    long water, largest;
    int regions = label_regions(&water, &largest);
    if (queries > 0 && largest < 2) {
        fprintf(stderr, "no two cells of the map connect\n");
        return 1;
    }
    /* The queries: a start on dry land, a goal in its region at most
     * 16 << k cells away in each axis (k from 0 to 4, and no more than an
     * eighth of the map), as units in a game are sent near and far. */
    long expanded = 0, total_cost = 0, total_steps = 0;
    unsigned long long path_hash = 0;
    int limit = (width < height ? width : height) / 8;
    for (int q = 0; q < queries; q++) {
        int start, goal;
        for (;;) {
            int sx = 1 + random_below(width - 2), sy = 1 + random_below(height - 2);
            start = sy * width + sx;
            if (!terrain[start]) continue;
            int range = 16 << random_below(5);
            if (range > limit) range = limit;
            int tries;
            for (tries = 0; tries < 64; tries++) {
                int tx = clamp(sx + random_below(2 * range + 1) - range, 1, width - 2);
                int ty = clamp(sy + random_below(2 * range + 1) - range, 1, height - 2);
                goal = ty * width + tx;
                if (goal != start && region[goal] == region[start]) break;
            }
            if (tries < 64) break;
        }
        int cost = find_path(start, goal, (unsigned)q + 1, &expanded);
        if (cost < 0) {
            fprintf(stderr, "no path in a region: a bug\n");
            return 1;
        }
        total_cost += cost;
        /* Walk the path back, as a unit would follow it. */
        for (int c = goal; c != start; c -= offset8[state[c].from]) {
            path_hash = (path_hash ^ (unsigned)c) * 1099511628211ULL;
            total_steps++;
        }
    }
    printf("map %dx%d, water %.1f%%, regions %d (largest %ld cells), queries %d\n", width, height,
           100.0 * water / cells, regions, largest, queries);
    printf("expanded %ld, path cost %ld, path steps %ld, path hash %016llx\n", expanded, total_cost, total_steps,
           path_hash);
    return 0;
}
