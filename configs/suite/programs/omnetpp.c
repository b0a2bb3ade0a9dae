/* A discrete-event network simulation in the manner of SPEC CPU2017's
 * 520.omnetpp_r, which runs the OMNeT++ kernel on a large Ethernet
 * network: a tree of learning switches with hosts at its leaves, clients
 * sending requests to servers and servers answering with a few frames.
 * Like OMNeT++, the simulation keeps its future events in a binary heap of
 * pointers to heap-allocated messages ordered by (time, scheduling order);
 * a frame is itself the event that carries it from hop to hop, frames wait
 * in per-port output queues, each port reschedules its own end-of-
 * transmission message, switches look destinations up in a MAC address
 * table and learn sources, and hosts keep latency statistics. Time is an
 * integer count of picoseconds, as OMNeT++'s simtime_t is. Written for
 * spmsim's suite (configs/suite/spec2017-stand-ins.toml); usage: omnetpp
 * FANOUT DEPTH HOSTS_PER_SWITCH MICROSECONDS SEED (a switch tree DEPTH
 * levels deep, FANOUT children per switch, simulated for MICROSECONDS). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef long long simtime; /* picoseconds */

enum { APP_TIMER, TX_END, ARRIVAL, RELAY };
enum { REQUEST, RESPONSE };

typedef struct Msg {
    simtime time;             /* when the event happens */
    unsigned long long order; /* scheduling order: equal times go first come, first served */
    int kind, module, port;   /* what happens, where */
    int src, dst, bytes, type, hops;
    unsigned seq;
    simtime created;  /* when the request was sent (a response carries its request's) */
    struct Msg *next; /* in a port's output queue */
    char name[24];
} Msg;

typedef struct {
    int peer, peer_port;  /* the module and port at the link's other end */
    simtime byte_time;    /* the link's transmission time per byte */
    int busy, queued;
    Msg *head, *tail;     /* frames waiting to be sent */
    Msg *end_tx;          /* the port's own end-of-transmission message */
    long long frames, bytes, drops;
    simtime busy_time;
} Port;

typedef struct {
    int mac, port; /* mac -1: an empty slot */
    simtime seen;
} MacEntry;

typedef struct {
    int is_switch, nports;
    Port *ports;
    /* A switch: its address table and its uplink (-1 at the root). */
    MacEntry *table;
    int table_mask, table_used, uplink;
    long long relayed, learned, unknown;
    /* A host: its address (its index among the hosts), its role, its counts. */
    int address, server;
    unsigned next_seq;
    long long requests, served, responses;
    simtime lat_min, lat_max;
    double lat_sum, lat_sq;
    long long histogram[48];
} Module;

static Module *modules;
static int n_switches, n_hosts;
static Msg **heap;
static int heap_n, heap_cap;
static unsigned long long scheduled;
static simtime now;
static long long events, delivered, dropped;

static const simtime PROPAGATION = 500000;    /* 0.5 us: 100 m of cable */
static const simtime RELAY_DELAY = 1000000;   /* 1 us in the switch fabric */
static const simtime MEAN_THINK = 2500000000; /* 2.5 ms between a client's requests */
static const int QUEUE_LIMIT = 64;

static unsigned long long rng_state;
static unsigned next_random(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 33);
}

static simtime exponential(simtime mean) {
    double u = (next_random() + 1.0) / 2147483649.0;
    return (simtime)(-log(u) * (double)mean);
}

static void *checked(void *p) {
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* ------------------------------------------------ the future event set */

static int earlier(const Msg *a, const Msg *b) {
    return a->time < b->time || (a->time == b->time && a->order < b->order);
}

static void schedule(Msg *m, simtime t) {
    m->time = t;
    m->order = scheduled++;
    if (heap_n == heap_cap) {
        heap_cap = heap_cap ? 2 * heap_cap : 1024;
        heap = checked(realloc(heap, sizeof(Msg *) * heap_cap));
    }
    int i = heap_n++;
    while (i > 0 && earlier(m, heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = m;
}

static Msg *take_first(void) {
    Msg *top = heap[0], *last = heap[--heap_n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= heap_n) break;
        if (c + 1 < heap_n && earlier(heap[c + 1], heap[c])) c++;
        if (!earlier(heap[c], last)) break;
        heap[i] = heap[c];
        i = c;
    }
    if (heap_n > 0) heap[i] = last;
    return top;
}

/* ------------------------------------------------------------ messages */

/* "prefix-NUMBER", as a model names its messages. */
static void set_name(Msg *m, const char *prefix, unsigned number) {
    char digits[12];
    int n = 0, k = 0;
    do {
        digits[n++] = (char)('0' + number % 10);
        number /= 10;
    } while (number);
    while (*prefix && k < 12) m->name[k++] = *prefix++;
    m->name[k++] = '-';
    while (n > 0) m->name[k++] = digits[--n];
    m->name[k] = 0;
}

static Msg *new_frame(int type, int src, int dst, int bytes, unsigned seq, simtime created) {
    Msg *m = checked(malloc(sizeof(Msg)));
    m->kind = ARRIVAL;
    m->type = type;
    m->src = src;
    m->dst = dst;
    m->bytes = bytes;
    m->seq = seq;
    m->created = created;
    m->hops = 0;
    m->next = NULL;
    set_name(m, type == REQUEST ? "request" : "response", seq);
    return m;
}

static void start_transmission(int module, int port, Msg *m) {
    Port *p = &modules[module].ports[port];
    simtime duration = (simtime)m->bytes * p->byte_time;
    p->busy = 1;
    p->frames++;
    p->bytes += m->bytes;
    p->busy_time += duration;
    m->kind = ARRIVAL;
    m->module = p->peer;
    m->port = p->peer_port;
    m->hops++;
    schedule(m, now + duration + PROPAGATION);
    schedule(p->end_tx, now + duration);
}

static void send_frame(int module, int port, Msg *m) {
    Port *p = &modules[module].ports[port];
    if (!p->busy) {
        start_transmission(module, port, m);
    } else if (p->queued < QUEUE_LIMIT) {
        m->next = NULL;
        if (p->tail) p->tail->next = m;
        else p->head = m;
        p->tail = m;
        p->queued++;
    } else {
        p->drops++;
        dropped++;
        free(m);
    }
}

/* ---------------------------------------------------- the address table */

static MacEntry *find_slot(Module *s, int mac) {
    unsigned h = ((unsigned)mac * 2654435761u) >> 7;
    for (;;) {
        MacEntry *e = &s->table[h & s->table_mask];
        if (e->mac == mac || e->mac < 0) return e;
        h++;
    }
}

static void learn(Module *s, int mac, int port) {
    MacEntry *e = find_slot(s, mac);
    if (e->mac < 0) {
        /* A full table learns nothing new. */
        if (4 * (s->table_used + 1) > 3 * (s->table_mask + 1)) return;
        e->mac = mac;
        s->table_used++;
        s->learned++;
    }
    e->port = port;
    e->seen = now;
}

/* --------------------------------------------------------- the modules */

static void host_send(Module *h, Msg *m) {
    send_frame((int)(h - modules), 0, m);
}

static void switch_arrival(Module *s, Msg *m) {
    learn(s, m->src, m->port);
    MacEntry *e = find_slot(s, m->dst);
    int out = e->mac < 0 ? s->uplink : e->port;
    if (out < 0 || out == m->port) {
        /* Unknown at the root, or back where it came from: filtered. */
        s->unknown++;
        free(m);
        return;
    }
    s->relayed++;
    m->kind = RELAY;
    m->port = out;
    schedule(m, now + RELAY_DELAY);
}

static void host_arrival(Module *h, Msg *m) {
    if (m->type == REQUEST) {
        /* The server answers with one to five frames. */
        h->served++;
        int frames = 1 + (int)(next_random() % 5);
        for (int i = 0; i < frames; i++) {
            int bytes = 64 + (int)(next_random() % 1437);
            host_send(h, new_frame(RESPONSE, h->address, m->src, bytes, m->seq, m->created));
        }
    } else {
        simtime latency = now - m->created;
        h->responses++;
        h->lat_sum += (double)latency;
        h->lat_sq += (double)latency * (double)latency;
        if (latency < h->lat_min) h->lat_min = latency;
        if (latency > h->lat_max) h->lat_max = latency;
        int bucket = 0;
        while (bucket < 47 && (latency >> bucket) > 1) bucket++;
        h->histogram[bucket]++;
        delivered++;
    }
    free(m);
}

static void app_timer(Module *h, Msg *timer) {
    /* A request to a server at random. */
    int servers = (n_hosts + 7) / 8;
    int dst = 8 * (int)(next_random() % servers);
    if (dst != h->address) {
        h->requests++;
        int bytes = 64 + (int)(next_random() % 512);
        host_send(h, new_frame(REQUEST, h->address, dst, bytes, h->next_seq++, now));
    }
    schedule(timer, now + exponential(MEAN_THINK));
}

static void __attribute__((noinline)) simulate(simtime end) {
    while (heap_n > 0 && heap[0]->time <= end) {
        Msg *m = take_first();
        now = m->time;
        events++;
        Module *mod = &modules[m->module];
        switch (m->kind) {
        case APP_TIMER:
            app_timer(mod, m);
            break;
        case TX_END: {
            Port *p = &mod->ports[m->port];
            p->busy = 0;
            if (p->head) {
                Msg *next = p->head;
                p->head = next->next;
                if (!p->head) p->tail = NULL;
                p->queued--;
                start_transmission(m->module, m->port, next);
            }
            break;
        }
        case ARRIVAL:
            if (mod->is_switch) switch_arrival(mod, m);
            else host_arrival(mod, m);
            break;
        case RELAY:
            send_frame(m->module, m->port, m);
            break;
        }
    }
}

/* ------------------------------------------------------------ the network */

static void link_ports(int a, int pa, int b, int pb, simtime byte_time) {
    modules[a].ports[pa].peer = b;
    modules[a].ports[pa].peer_port = pb;
    modules[a].ports[pa].byte_time = byte_time;
    modules[b].ports[pb].peer = a;
    modules[b].ports[pb].peer_port = pa;
    modules[b].ports[pb].byte_time = byte_time;
}

static void make_ports(int module, int n) {
    Module *m = &modules[module];
    m->nports = n;
    m->ports = checked(calloc(n, sizeof(Port)));
    for (int p = 0; p < n; p++) {
        Msg *e = checked(calloc(1, sizeof(Msg)));
        e->kind = TX_END;
        e->module = module;
        e->port = p;
        set_name(e, "endTx", (unsigned)p);
        m->ports[p].end_tx = e;
    }
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s FANOUT DEPTH HOSTS_PER_SWITCH MICROSECONDS SEED\n", argv[0]);
        return 2;
    }
    int fanout = atoi(argv[1]), depth = atoi(argv[2]), per_switch = atoi(argv[3]);
    simtime end = (simtime)atoll(argv[4]) * 1000000LL;
    rng_state = (unsigned long long)atoll(argv[5]);
    if (fanout < 1 || depth < 1 || per_switch < 1 || depth > 8) {
        fprintf(stderr, "FANOUT and HOSTS_PER_SWITCH at least 1, DEPTH from 1 to 8\n");
        return 2;
    }
    /* Switches level by level from the root; the last level's switches
     * (the access switches) have the hosts. */
    int first_access = 0, access = 1;
    n_switches = 1;
    for (int level = 1; level < depth; level++) {
        first_access = n_switches;
        access *= fanout;
        n_switches += access;
    }
    n_hosts = access * per_switch;
    modules = checked(calloc(n_switches + n_hosts, sizeof(Module)));
    const simtime fast = 800, slow = 8000; /* 10 Gb/s between switches, 1 Gb/s to hosts */
    for (int s = 0; s < n_switches; s++) {
        Module *m = &modules[s];
        m->is_switch = 1;
        int children = s >= first_access ? per_switch : fanout;
        m->uplink = s == 0 ? -1 : children;
        make_ports(s, children + (s != 0));
    }
    for (int s = 0; s < first_access; s++)
        for (int c = 0; c < fanout; c++) {
            int child = s * fanout + 1 + c;
            link_ports(s, c, child, modules[child].uplink, fast);
        }
    for (int h = 0; h < n_hosts; h++) {
        int id = n_switches + h, sw = first_access + h / per_switch;
        Module *m = &modules[id];
        m->address = h;
        m->server = h % 8 == 0;
        m->lat_min = (simtime)1 << 62;
        make_ports(id, 1);
        link_ports(sw, h % per_switch, id, 0, slow);
    }
    /* Address tables sized for the hosts below each switch, four slots
     * each, and filled as after the network's warm-up: every switch knows
     * the hosts below it (and sends what it does not know upward). */
    for (int s = 0; s < n_switches; s++) {
        Module *m = &modules[s];
        int level = 0, start = 0, width = 1;
        while (s >= start + width) {
            start += width;
            width *= fanout;
            level++;
        }
        int below = per_switch;
        for (int l = level; l < depth - 1; l++) below *= fanout;
        int slots = 256;
        while (slots < 4 * below) slots *= 2;
        m->table = checked(malloc(sizeof(MacEntry) * slots));
        m->table_mask = slots - 1;
        for (int i = 0; i < slots; i++) m->table[i].mac = -1;
    }
    for (int h = 0; h < n_hosts; h++) {
        int s = first_access + h / per_switch, port = h % per_switch;
        for (;;) {
            learn(&modules[s], h, port);
            if (s == 0) break;
            port = (s - 1) % fanout;
            s = (s - 1) / fanout;
        }
    }
    for (int h = 0; h < n_hosts; h++) {
        if (modules[n_switches + h].server) continue;
        Msg *t = checked(calloc(1, sizeof(Msg)));
        t->kind = APP_TIMER;
        t->module = n_switches + h;
        set_name(t, "sendTimer", (unsigned)h);
        schedule(t, exponential(MEAN_THINK));
    }
    simulate(end);
    long long requests = 0, served = 0, relayed = 0, unknown = 0, drops = 0;
    double lat = 0;
    for (int s = 0; s < n_switches; s++) {
        relayed += modules[s].relayed;
        unknown += modules[s].unknown;
        for (int p = 0; p < modules[s].nports; p++) drops += modules[s].ports[p].drops;
    }
    for (int h = 0; h < n_hosts; h++) {
        Module *m = &modules[n_switches + h];
        requests += m->requests;
        served += m->served;
        lat += m->lat_sum;
    }
    printf("switches %d, hosts %d, events %lld, requests %lld, served %lld, responses %lld, relayed %lld, unknown %lld, dropped %lld (%lld at switches), mean latency %.3f us, pending %d\n",
           n_switches, n_hosts, events, requests, served, delivered, relayed, unknown, dropped, drops,
           delivered ? lat / delivered / 1e6 : 0.0, heap_n);
    return 0;
}
