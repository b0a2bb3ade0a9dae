/* spmtrace: a valgrind tool that runs a program at close to valgrind's
   own speed and traces its memory accesses only inside chosen windows of
   its run (issue 13: recording SimPoint-style simulation points deep in a
   program, which lackey cannot reach in reasonable time).

   Written for spmsim; spmsim compiles it on first use against the valgrind
   it finds (trace/vgtool.rs).

   Counting.  Every superblock adds the number of its guest instructions
   that have begun to a global counter, in inline IR (a load, an add and a
   store before each side exit and at the end), so a rep-prefixed
   instruction counts once per iteration, as lackey prints it and as
   exp-bbv counts it.

   Switching.  Every superblock starts with a check of that counter
   against the next switch point; once it is reached, the superblock exits
   to itself with a yield before running anything.  Back in the scheduler,
   the start-of-client-code callback changes the mode, discards every
   translation and turns valgrind's front-end IR dump on (tracing) or off
   (fast-forwarding), so the superblock is translated again with the new
   mode's instrumentation.

   Output, while tracing: lackey's `--trace-mem=yes` text (an `I` line per
   instruction, then ` L`, ` S` or ` M` per data access, a load and a store
   of the same address and size in one instruction merged into ` M`),
   written to valgrind's log, in the same stream as the IR dump, with
   marker lines around each window:

      SPMTRACE begin <window> <instructions before it>
      SPMTRACE end <window> <instructions before the end>
      SPMTRACE done

   Basic-block vectors (--bbv-out, --bbv-interval): every superblock also
   adds its instructions to a counter of its own, and at each interval
   boundary one line of exp-bbv's format goes to the file, counts of
   instructions per block (SimPoint's vectors), the counters then cleared:

      T:<block>:<instructions> :<block>:<instructions> ...
*/

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_vki.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_transtab.h"

/* Three of the core's own globals, which no tool header exports.  The
   log sink is where the IR dump goes (its descriptor is its first
   field); the trace flags are the --trace-flags bits; the discard flag
   says it is safe to discard translations, which it is between
   timeslices, where the callback below runs. */
extern struct { Int fd; } VG_(log_output_sink);
extern UChar VG_(clo_trace_flags);
extern Bool VG_(ok_to_discard_translations);

#define MAX_WINDOWS 64

static const HChar* clo_windows = NULL;
static const HChar* clo_bbv_out = NULL;
static ULong clo_bbv_interval = 100000000ULL;
static ULong win_start[MAX_WINDOWS];
static ULong win_len[MAX_WINDOWS];
static Int n_windows = 0;

/* Instructions begun so far, and the count at which the mode changes. */
static ULong spm_count = 0;
static ULong spm_next = ~0ULL;
static Int window = 0;      /* the window being traced or waited for */
static Bool tracing = False;
static UChar dump_flags = 0; /* --trace-flags as given, restored while tracing */
static ULong win_next = ~0ULL;  /* count of the next window start or end */
static ULong bbv_next = ~0ULL;  /* count of the next interval boundary */

static void set_next(void)
{
   spm_next = win_next < bbv_next ? win_next : bbv_next;
}

/* ------------------------------------------------------------------ */
/* Output                                                             */

static HChar out_buf[1 << 16];
static Int out_used = 0;

static void out_flush(void)
{
   Int done = 0;
   while (done < out_used) {
      Int n = VG_(write)(VG_(log_output_sink).fd, out_buf + done, out_used - done);
      if (n <= 0) {
         break;
      }
      done += n;
   }
   out_used = 0;
}

static void out_text(const HChar* s)
{
   while (*s) {
      if (out_used == sizeof(out_buf)) {
         out_flush();
      }
      out_buf[out_used++] = *s++;
   }
}

static void out_dec(ULong v)
{
   HChar tmp[24];
   Int n = 0;
   do {
      tmp[n++] = '0' + (HChar)(v % 10);
      v /= 10;
   } while (v);
   HChar s[24];
   for (Int i = 0; i < n; i++) {
      s[i] = tmp[n - 1 - i];
   }
   s[n] = 0;
   out_text(s);
}

/* One access line: kind, address as at least eight hex digits, size. */
static void out_access(const HChar* kind, Addr a, UWord size)
{
   if (out_used > (Int)sizeof(out_buf) - 64) {
      out_flush();
   }
   static const HChar hex[] = "0123456789abcdef";
   HChar* p = out_buf + out_used;
   while (*kind) {
      *p++ = *kind++;
   }
   Int digits = 8;
   while (digits < 16 && (a >> (4 * digits)) != 0) {
      digits++;
   }
   for (Int d = digits - 1; d >= 0; d--) {
      *p++ = hex[(a >> (4 * d)) & 0xf];
   }
   *p++ = ',';
   HChar tmp[24];
   Int n = 0;
   do {
      tmp[n++] = '0' + (HChar)(size % 10);
      size /= 10;
   } while (size);
   while (n) {
      *p++ = tmp[--n];
   }
   *p++ = '\n';
   out_used = (Int)(p - out_buf);
}

static VG_REGPARM(2) void spm_instr(Addr a, UWord size) { out_access("I  ", a, size); }
static VG_REGPARM(2) void spm_load(Addr a, UWord size) { out_access(" L ", a, size); }
static VG_REGPARM(2) void spm_store(Addr a, UWord size) { out_access(" S ", a, size); }
static VG_REGPARM(2) void spm_modify(Addr a, UWord size) { out_access(" M ", a, size); }

/* ------------------------------------------------------------------ */
/* Basic-block vectors                                                */

/* A block's counter lives in a chunk that never moves, since translated
   code holds its address. */
typedef struct {
   VgHashNode node; /* key: the block's unredirected guest address */
   ULong* counter;
   UInt id;
} BlockSlot;

#define CHUNK 4096
static VgHashTable* slots = NULL;
static ULong* chunks[1 << 14];
static UInt n_slots = 0;
static Int bbv_fd = -1;

static ULong* counter_of(Addr a)
{
   BlockSlot* b = VG_(HT_lookup)(slots, (UWord)a);
   if (b) {
      return b->counter;
   }
   UInt c = n_slots / CHUNK;
   tl_assert(c < sizeof(chunks) / sizeof(chunks[0]));
   if (!chunks[c]) {
      chunks[c] = VG_(calloc)("spmtrace.bbv", CHUNK, sizeof(ULong));
   }
   b = VG_(malloc)("spmtrace.slot", sizeof(BlockSlot));
   b->node.key = (UWord)a;
   b->counter = &chunks[c][n_slots % CHUNK];
   b->id = ++n_slots;
   VG_(HT_add_node)(slots, b);
   return b->counter;
}

static HChar bbv_buf[1 << 16];
static Int bbv_used = 0;

static void bbv_write(const HChar* s, Int n)
{
   if (bbv_used + n > (Int)sizeof(bbv_buf)) {
      VG_(write)(bbv_fd, bbv_buf, bbv_used);
      bbv_used = 0;
   }
   VG_(memcpy)(bbv_buf + bbv_used, s, n);
   bbv_used += n;
}

/* One interval's vector, then every counter back to zero. */
static void bbv_dump(void)
{
   HChar item[64];
   bbv_write("T", 1);
   for (UInt i = 0; i < n_slots; i++) {
      ULong* c = &chunks[i / CHUNK][i % CHUNK];
      if (*c) {
         Int n = VG_(snprintf)(item, sizeof(item), ":%u:%llu ", i + 1, *c);
         bbv_write(item, n);
         *c = 0;
      }
   }
   bbv_write("\n", 1);
}

/* ------------------------------------------------------------------ */
/* Mode changes                                                       */

static void discard_all(void)
{
   Bool was = VG_(ok_to_discard_translations);
   VG_(ok_to_discard_translations) = True;
   VG_(discard_translations_safely)((Addr)0x1000, ~(SizeT)0xfff, "spmtrace");
   VG_(ok_to_discard_translations) = was;
}

static void marker(const HChar* what, Int w, ULong count)
{
   out_text("SPMTRACE ");
   out_text(what);
   out_text(" ");
   out_dec((ULong)w);
   out_text(" ");
   out_dec(count);
   out_text("\n");
}

/* The stack last printed for each thread slot.  Valgrind registers a new
   thread's stack when it is cloned (the mapping its stack pointer is in,
   up to that pointer), before the thread runs, so the line comes before
   any of the thread's accesses; a slot freed by a thread that ended is
   given to a later thread, whose stack may be another mapping, so a slot
   is printed again whenever its stack changed:

      SPMTRACE stack <thread> <lowest address> <highest address + 1>
*/
static Addr* stack_said_max;
static SizeT* stack_said_size;

static void say_stack(ThreadId tid)
{
   if (tid >= VG_N_THREADS) {
      return;
   }
   Addr max = VG_(thread_get_stack_max)(tid);
   SizeT size = VG_(thread_get_stack_size)(tid);
   if (size == 0 || max < size || (stack_said_max[tid] == max && stack_said_size[tid] == size)) {
      return;
   }
   stack_said_max[tid] = max;
   stack_said_size[tid] = size;
   out_text("SPMTRACE stack ");
   out_dec((ULong)tid);
   out_text(" ");
   out_dec((ULong)(max + 1 - size));
   out_text(" ");
   out_dec((ULong)max + 1);
   out_text("\n");
   out_flush();
}

/* Runs between timeslices: act on every boundary the count has passed. */
static void at_client_code(ThreadId tid, ULong blocks)
{
   (void)blocks;
   say_stack(tid);
   if (spm_count < spm_next) {
      return;
   }
   if (spm_count >= bbv_next) {
      bbv_dump();
      while (bbv_next <= spm_count) {
         bbv_next += clo_bbv_interval;
      }
   }
   Bool was_tracing = tracing;
   while (spm_count >= win_next) {
      if (tracing) {
         marker("end", window, spm_count);
         tracing = False;
         window++;
         win_next = window < n_windows ? win_start[window] : ~0ULL;
         if (window == n_windows) {
            out_text("SPMTRACE done\n");
         }
      } else {
         marker("begin", window, spm_count);
         tracing = True;
         win_next = spm_count + win_len[window];
      }
   }
   set_next();
   out_flush();
   if (tracing != was_tracing) {
      VG_(clo_trace_flags) = tracing ? dump_flags : 0;
      discard_all();
   }
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                    */

static IRExpr* load64(IRSB* sb, ULong* where)
{
   IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)where))));
   return IRExpr_RdTmp(t);
}

/* *where += n, inline. */
static void add_to(IRSB* sb, ULong* where, UInt n)
{
   IRExpr* old = load64(sb, where);
   IRTemp sum = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, old, IRExpr_Const(IRConst_U64(n)))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)where), IRExpr_RdTmp(sum)));
}

/* Count n instructions begun: the global count and the block's own. */
static void add_count(IRSB* sb, ULong* block, UInt n)
{
   if (n == 0) {
      return;
   }
   add_to(sb, &spm_count, n);
   if (block) {
      add_to(sb, block, n);
   }
}

typedef enum { EvInstr, EvLoad, EvStore, EvModify } EvKind;

typedef struct {
   EvKind kind;
   IRExpr* addr;
   UWord size;
   IRExpr* guard; /* NULL: unconditional */
} Event;

#define MAX_EVENTS 64
static Event events[MAX_EVENTS];
static Int n_events = 0;

static void flush_events(IRSB* sb)
{
   for (Int i = 0; i < n_events; i++) {
      Event* e = &events[i];
      void* fn;
      const HChar* name;
      switch (e->kind) {
      case EvInstr: fn = (void*)spm_instr; name = "spm_instr"; break;
      case EvLoad: fn = (void*)spm_load; name = "spm_load"; break;
      case EvStore: fn = (void*)spm_store; name = "spm_store"; break;
      default: fn = (void*)spm_modify; name = "spm_modify"; break;
      }
      IRDirty* d = unsafeIRDirty_0_N(2, name, VG_(fnptr_to_fnentry)(fn), mkIRExprVec_2(e->addr, mkIRExpr_HWord(e->size)));
      if (e->guard) {
         d->guard = e->guard;
      }
      addStmtToIRSB(sb, IRStmt_Dirty(d));
   }
   n_events = 0;
}

static void add_event(IRSB* sb, EvKind kind, IRExpr* addr, UWord size, IRExpr* guard)
{
   tl_assert(isIRAtom(addr));
   if (kind == EvStore && n_events > 0) {
      /* A store to what the same instruction just loaded: one modify. */
      Event* last = &events[n_events - 1];
      if (last->kind == EvLoad && last->size == size && !last->guard && !guard && eqIRAtom(last->addr, addr)) {
         last->kind = EvModify;
         return;
      }
   }
   if (n_events == MAX_EVENTS) {
      flush_events(sb);
   }
   events[n_events].kind = kind;
   events[n_events].addr = addr;
   events[n_events].size = size;
   events[n_events].guard = guard;
   n_events++;
}

static IRSB* spm_instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout, const VexGuestExtents* vge,
                            const VexArchInfo* archinfo, IRType gWordTy, IRType hWordTy)
{
   (void)vge;
   (void)archinfo;
   (void)gWordTy;
   (void)hWordTy;
   /* Lines of blocks already run come before anything new. */
   out_flush();
   IRSB* out = deepCopyIRSBExceptStmts(in);
   IRTypeEnv* env = in->tyenv;
   Int i = 0;
   while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark) {
      addStmtToIRSB(out, in->stmts[i]);
      i++;
   }
   /* The switch check: leave before running anything once the count has
      reached the next switch point, and come back to this same
      (unredirected) address after the mode changes. */
   {
      IRExpr* count = load64(out, &spm_count);
      IRExpr* next = load64(out, &spm_next);
      IRTemp due = newIRTemp(out->tyenv, Ity_I1);
      addStmtToIRSB(out, IRStmt_WrTmp(due, IRExpr_Binop(Iop_CmpLE64U, next, count)));
      addStmtToIRSB(out, IRStmt_Exit(IRExpr_RdTmp(due), Ijk_Yield, IRConst_U64((ULong)closure->nraddr), layout->offset_IP));
   }
   ULong* block = bbv_fd >= 0 ? counter_of((Addr)closure->nraddr) : NULL;
   UInt begun = 0; /* instructions begun and not yet counted */
   n_events = 0;
   for (; i < in->stmts_used; i++) {
      IRStmt* st = in->stmts[i];
      if (!st || st->tag == Ist_NoOp) {
         continue;
      }
      switch (st->tag) {
      case Ist_IMark:
         begun++;
         if (tracing) {
            flush_events(out);
            add_event(out, EvInstr, mkIRExpr_HWord((HWord)st->Ist.IMark.addr + st->Ist.IMark.delta), st->Ist.IMark.len, NULL);
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_WrTmp:
         if (tracing && st->Ist.WrTmp.data->tag == Iex_Load) {
            IRExpr* ld = st->Ist.WrTmp.data;
            add_event(out, EvLoad, ld->Iex.Load.addr, sizeofIRType(ld->Iex.Load.ty), NULL);
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_Store:
         if (tracing) {
            IRExpr* data = st->Ist.Store.data;
            add_event(out, EvStore, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(env, data)), NULL);
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_StoreG:
         if (tracing) {
            IRStoreG* sg = st->Ist.StoreG.details;
            add_event(out, EvStore, sg->addr, sizeofIRType(typeOfIRExpr(env, sg->data)), sg->guard);
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_LoadG:
         if (tracing) {
            IRLoadG* lg = st->Ist.LoadG.details;
            IRType ty = Ity_INVALID, widened = Ity_INVALID;
            typeOfIRLoadGOp(lg->cvt, &widened, &ty);
            add_event(out, EvLoad, lg->addr, sizeofIRType(ty), lg->guard);
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_Dirty:
         if (tracing) {
            IRDirty* d = st->Ist.Dirty.details;
            if (d->mFx != Ifx_None) {
               tl_assert(d->mAddr && d->mSize > 0);
               if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) {
                  add_event(out, EvLoad, d->mAddr, d->mSize, NULL);
               }
               if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) {
                  add_event(out, EvStore, d->mAddr, d->mSize, NULL);
               }
            }
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_CAS:
         if (tracing) {
            IRCAS* cas = st->Ist.CAS.details;
            UWord size = sizeofIRType(typeOfIRExpr(env, cas->dataLo));
            if (cas->dataHi) {
               size *= 2;
            }
            add_event(out, EvLoad, cas->addr, size, NULL);
            add_event(out, EvStore, cas->addr, size, NULL);
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_LLSC:
         if (tracing) {
            if (st->Ist.LLSC.storedata == NULL) {
               add_event(out, EvLoad, st->Ist.LLSC.addr, sizeofIRType(typeOfIRTemp(env, st->Ist.LLSC.result)), NULL);
            } else {
               add_event(out, EvStore, st->Ist.LLSC.addr, sizeofIRType(typeOfIRExpr(env, st->Ist.LLSC.storedata)), NULL);
            }
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_Exit:
         /* The exit may be taken: what came before it happens first. */
         if (tracing) {
            flush_events(out);
         }
         add_count(out, block, begun);
         begun = 0;
         addStmtToIRSB(out, st);
         break;
      default:
         addStmtToIRSB(out, st);
         break;
      }
   }
   if (tracing) {
      flush_events(out);
   }
   add_count(out, block, begun);
   return out;
}

/* ------------------------------------------------------------------ */
/* Options and set-up                                                 */

static Bool spm_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--windows", clo_windows) {
      return True;
   }
   if VG_STR_CLO(arg, "--bbv-out", clo_bbv_out) {
      return True;
   }
   if VG_BINT_CLO(arg, "--bbv-interval", clo_bbv_interval, 1, 1ULL << 50) {
      return True;
   }
   return False;
}

static void spm_usage(void)
{
   VG_(printf)("    --windows=S+L,S+L,...   trace L instructions after S, for each window (ascending, disjoint)\n");
   VG_(printf)("    --bbv-out=FILE          write a basic-block vector per interval to FILE\n");
   VG_(printf)("    --bbv-interval=N        instructions per interval [100000000]\n");
}

static void spm_debug_usage(void) {}

static void parse_windows(void)
{
   if (!clo_windows) {
      return;
   }
   const HChar* p = clo_windows;
   ULong after = 0;
   while (*p) {
      if (n_windows == MAX_WINDOWS) {
         VG_(fmsg_bad_option)("--windows", "at most %d windows\n", MAX_WINDOWS);
      }
      HChar* end;
      ULong s = VG_(strtoull10)(p, &end);
      if (end == p || *end != '+') {
         VG_(fmsg_bad_option)("--windows", "expected START+LENGTH at `%s`\n", p);
      }
      p = end + 1;
      ULong l = VG_(strtoull10)(p, &end);
      if (end == p || l == 0) {
         VG_(fmsg_bad_option)("--windows", "expected a positive LENGTH at `%s`\n", p);
      }
      if (n_windows > 0 && s < after) {
         VG_(fmsg_bad_option)("--windows", "windows must be ascending and disjoint\n");
      }
      win_start[n_windows] = s;
      win_len[n_windows] = l;
      after = s + l;
      n_windows++;
      p = end;
      if (*p == ',') {
         p++;
      } else if (*p) {
         VG_(fmsg_bad_option)("--windows", "unexpected `%s`\n", p);
      }
   }
}

static void spm_post_clo_init(void)
{
   parse_windows();
   stack_said_max = VG_(calloc)("spmtrace.stacks", VG_N_THREADS, sizeof(Addr));
   stack_said_size = VG_(calloc)("spmtrace.stacks", VG_N_THREADS, sizeof(SizeT));
   if (clo_bbv_out) {
      bbv_fd = VG_(fd_open)(clo_bbv_out, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0644);
      if (bbv_fd < 0) {
         VG_(fmsg_bad_option)("--bbv-out", "cannot create `%s`\n", clo_bbv_out);
      }
      slots = VG_(HT_construct)("spmtrace.slots");
      bbv_next = clo_bbv_interval;
   }
   if (n_windows == 0 && bbv_fd < 0) {
      VG_(fmsg_bad_option)("--windows", "spmtrace needs a window or --bbv-out\n");
   }
   dump_flags = VG_(clo_trace_flags);
   window = 0;
   tracing = False;
   win_next = n_windows > 0 ? win_start[0] : ~0ULL;
   if (n_windows > 0 && win_start[0] == 0) {
      /* A window at the very start: trace from the first block (nothing
         is translated yet, so nothing to discard). */
      marker("begin", 0, 0);
      tracing = True;
      win_next = win_len[0];
   } else {
      VG_(clo_trace_flags) = 0;
   }
   set_next();
}

static void spm_fini(Int exitcode)
{
   (void)exitcode;
   if (tracing) {
      marker("end", window, spm_count);
   }
   out_text("SPMTRACE exit ");
   out_dec(spm_count);
   out_text("\n");
   out_flush();
   if (bbv_fd >= 0) {
      /* The last, partial interval, as exp-bbv writes it. */
      bbv_dump();
      VG_(write)(bbv_fd, bbv_buf, bbv_used);
      VG_(close)(bbv_fd);
   }
}

static void spm_pre_clo_init(void)
{
   VG_(details_name)("spmtrace");
   VG_(details_version)(NULL);
   VG_(details_description)("spmsim's windowed memory tracer");
   VG_(details_copyright_author)("spmsim authors");
   VG_(details_bug_reports_to)("the spmsim issue tracker");
   VG_(details_avg_translation_sizeB)(200);
   VG_(basic_tool_funcs)(spm_post_clo_init, spm_instrument, spm_fini);
   VG_(needs_command_line_options)(spm_option, spm_usage, spm_debug_usage);
   VG_(track_start_client_code)(at_client_code);
}

VG_DETERMINE_INTERFACE_VERSION(spm_pre_clo_init)
