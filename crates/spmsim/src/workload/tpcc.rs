//! `tpcc`: the TPC-C New-Order transaction (Secon 4.1 "TPCC: OLTP
//! benchmark, using the New-Order transaction"; STAR V-A, from WHISPER)
//! over persistent row tables, every row update undo-logged. The steps
//! follow the TPC-C specification (2.4.2): read the warehouse tax, read
//! and advance the district's next order id, read the customer, insert the
//! ORDER and NEW-ORDER rows, then per item line read ITEM and STOCK,
//! update STOCK and insert an ORDER-LINE row.
//!
//! ```text
//!  WAREHOUSE  W x 96 B        DISTRICT  10W x 96 B     CUSTOMER 30000W x 656 B
//!  ITEM  100000 x 88 B        STOCK  100000W x 312 B
//!  ORDER, NEW-ORDER, ORDER-LINE: a ring of `orders_per_district` orders per
//!    district (32 B, 8 B, 15 x 64 B per order); slot = (o_id - 1) % ring
//! ```
//!
//! Row sizes are the specification's, padded to 8-byte words; only the
//! columns New-Order touches have their meaning (tax, next order id,
//! discount, credit, price, quantity, ytd, counts), the rest hold seeded
//! filler. The initial database (implicit, see [`super::pheap`]) is the
//! specification's: 3000 orders per district (ids 1..=3000, 5-15 lines
//! each), new orders 2101..=3000, next order id 3001, stock quantities
//! 10..=100. Customer and item ids are drawn with NURand (2.1.6); 1 % of
//! item lines come from a remote warehouse when there is more than one.
//! Not modelled: the 1 % of New-Orders that roll back on an unused item.

use super::params::{check_range, OpsPerTx};
use super::pheap::{align_up, check_plan, extent_bytes, mix, transaction, Layout, PHeap, TxStyle, HEAP_BASE};
use super::{Event, Generator};
use crate::util::rng::SplitMix64;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TpccParams {
    /// Warehouses (16: about 1.1 GB of initial rows).
    pub warehouses: u64,
    /// Orders a district's ORDER / NEW-ORDER / ORDER-LINE ring holds.
    pub orders_per_district: u64,
    pub ops_per_tx: OpsPerTx,
    pub gap: u32,
    pub style: TxStyle,
    pub populate: bool,
}

impl Default for TpccParams {
    fn default() -> Self {
        TpccParams {
            warehouses: 16,
            orders_per_district: 8192,
            ops_per_tx: OpsPerTx::fixed(1),
            gap: 10,
            style: TxStyle::Dynamic,
            populate: false,
        }
    }
}

impl TpccParams {
    pub fn validate(&self) -> Result<(), String> {
        check_range("tpcc", "warehouses", self.warehouses, 1, 1000)?;
        check_range("tpcc", "orders_per_district", self.orders_per_district, INITIAL_ORDERS + 1, 1 << 20)?;
        check_range("tpcc", "gap", self.gap as u64, 0, 10_000)?;
        let l = TpccLayout::new(self, 0);
        check_plan("tpcc", l.end(), extent_bytes(&l.extents()), self.populate)
    }
}

const DISTRICTS: u64 = 10;
const CUSTOMERS: u64 = 3000;
const ITEMS: u64 = 100_000;
const INITIAL_ORDERS: u64 = 3000;
/// Orders 2101..=3000 start undelivered (TPC-C 4.3.3.1).
const FIRST_NEW_ORDER: u64 = 2101;
const MAX_LINES: u64 = 15;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Table {
    Warehouse,
    District,
    Customer,
    Item,
    Stock,
    Order,
    NewOrder,
    OrderLine,
}

const TABLES: [Table; 8] =
    [Table::Warehouse, Table::District, Table::Customer, Table::Item, Table::Stock, Table::Order, Table::NewOrder, Table::OrderLine];

impl Table {
    /// Row size in words (the specification's bytes, padded).
    fn words(self) -> u64 {
        match self {
            Table::Warehouse | Table::District => 12,
            Table::Customer => 82,
            Table::Item => 11,
            Table::Stock => 39,
            Table::Order => 4,
            Table::NewOrder => 1,
            Table::OrderLine => 8,
        }
    }
}

pub struct TpccLayout {
    w: u64,
    ring: u64,
    base: [u64; 8],
    rows: [u64; 8],
    seed: u64,
}

fn pack(o: u64, d: u64, w: u64) -> u64 {
    o | (d + 1) << 32 | (w + 1) << 40
}

impl TpccLayout {
    fn new(p: &TpccParams, seed: u64) -> Self {
        let (w, ring) = (p.warehouses, p.orders_per_district);
        let rows = [
            w,
            w * DISTRICTS,
            w * DISTRICTS * CUSTOMERS,
            ITEMS,
            w * ITEMS,
            w * DISTRICTS * ring,
            w * DISTRICTS * ring,
            w * DISTRICTS * ring * MAX_LINES,
        ];
        let mut base = [0; 8];
        let mut a = HEAP_BASE;
        for (i, t) in TABLES.iter().enumerate() {
            base[i] = a;
            a = align_up(a + rows[i] * t.words() * 8, 4096);
        }
        TpccLayout { w, ring, base, rows, seed: mix(seed, 0x7BCC) }
    }
    fn end(&self) -> u64 {
        self.base[7] + self.rows[7] * Table::OrderLine.words() * 8
    }
    fn row(&self, t: Table, i: u64) -> u64 {
        self.base[t as usize] + i * t.words() * 8
    }
    fn filler(&self, t: Table, row: u64, col: u64) -> u64 {
        mix(mix(self.seed, (t as u64) << 56 | row), col)
    }
    /// Lines of initial order `o` of district row `dd`.
    fn initial_lines(&self, dd: u64, o: u64) -> u64 {
        5 + self.filler(Table::Order, dd << 20 | o, 99) % 11
    }
    fn initial_word(&self, t: Table, row: u64, col: u64) -> u64 {
        let f = self.filler(t, row, col);
        match t {
            Table::Warehouse => match col {
                0 => row + 1,
                1 => f % 2001,
                // w_ytd 300,000.00 in cents.
                2 => 30_000_000,
                _ => f,
            },
            Table::District => match col {
                0 => (row % DISTRICTS + 1) | (row / DISTRICTS + 1) << 32,
                1 => f % 2001,
                // d_ytd 30,000.00 in cents.
                2 => 3_000_000,
                3 => INITIAL_ORDERS + 1,
                _ => f,
            },
            Table::Customer => match col {
                0 => row,
                1 => f % 5001,
                2 => f.is_multiple_of(10) as u64,
                _ => f,
            },
            Table::Item => match col {
                0 => row + 1,
                1 => 1 + f % 10_000,
                2 => 100 + f % 9901,
                _ => f,
            },
            Table::Stock => match col {
                0 => (row % ITEMS + 1) | (row / ITEMS + 1) << 32,
                1 => 10 + f % 91,
                2..=4 => 0,
                _ => f,
            },
            Table::Order | Table::NewOrder | Table::OrderLine => {
                let per = if t == Table::OrderLine { MAX_LINES } else { 1 };
                let (dd, slot, line) = (row / per / self.ring, row / per % self.ring, row % per);
                let o = slot + 1;
                let (d, w) = (dd % DISTRICTS, dd / DISTRICTS);
                if slot >= INITIAL_ORDERS {
                    return 0;
                }
                let lines = self.initial_lines(dd, o);
                let delivered = o < FIRST_NEW_ORDER;
                match t {
                    Table::Order => match col {
                        0 => o,
                        1 => pack(1 + f % CUSTOMERS, d, w),
                        2 => 1_600_000_000 + o,
                        _ => (if delivered { 1 + f % 10 } else { 0 }) | lines << 8 | 1 << 16,
                    },
                    Table::NewOrder => {
                        if delivered {
                            0
                        } else {
                            pack(o, d, w)
                        }
                    }
                    _ if line >= lines => 0,
                    _ => match col {
                        0 => pack(o, d, w) | (line + 1) << 48,
                        1 => 1 + f % ITEMS,
                        2 => (w + 1) | 5 << 32,
                        3 => {
                            if delivered {
                                0
                            } else {
                                1 + f % 999_999
                            }
                        }
                        4 => {
                            if delivered {
                                1_600_000_000 + o
                            } else {
                                0
                            }
                        }
                        _ => f,
                    },
                }
            }
        }
    }
}

impl Layout for TpccLayout {
    fn initial(&self, b: u64) -> [u64; 8] {
        let i = match self.base.iter().rposition(|&s| s <= b) {
            Some(i) => i,
            None => return [0; 8],
        };
        let t = TABLES[i];
        let end = self.base[i] + self.rows[i] * t.words() * 8;
        std::array::from_fn(|w| {
            let a = b + 8 * w as u64;
            if a >= end {
                return 0;
            }
            let word = (a - self.base[i]) / 8;
            self.initial_word(t, word / t.words(), word % t.words())
        })
    }
    fn extents(&self) -> Vec<(u64, u64)> {
        TABLES.iter().enumerate().map(|(i, t)| (self.base[i], self.base[i] + self.rows[i] * t.words() * 8)).collect()
    }
}

pub struct Tpcc {
    pub h: PHeap<TpccLayout>,
    r: SplitMix64,
    p: TpccParams,
    populate: bool,
    /// NURand's run-time constants C for customer and item ids (2.1.6).
    c_cust: u64,
    c_item: u64,
    clock: u64,
}

/// What one New-Order did (for tests).
#[derive(Debug)]
pub struct NewOrder {
    pub w: u64,
    pub d: u64,
    pub o_id: u64,
    /// (supply warehouse, item, quantity) per line.
    pub lines: Vec<(u64, u64, u64)>,
}

impl Tpcc {
    pub fn new(seed: u64, p: TpccParams) -> Result<Self, String> {
        p.validate()?;
        let mut r = SplitMix64::new(seed);
        let (c_cust, c_item) = (r.below(1024), r.below(8192));
        let h = PHeap::new(TpccLayout::new(&p, seed), p.style, p.gap);
        Ok(Tpcc { h, r, populate: p.populate, p, c_cust, c_item, clock: 1_700_000_000 })
    }

    fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> u64 {
        ((self.r.below(a + 1) | (x + self.r.below(y - x + 1))) + c) % (y - x + 1) + x
    }

    pub fn new_order(&mut self, out: &mut Vec<Event>) -> NewOrder {
        let l = &self.h.layout;
        let (nw, ring) = (l.w, l.ring);
        let w = self.r.below(nw);
        let d = self.r.below(DISTRICTS);
        let c = self.nurand(1023, 1, CUSTOMERS, self.c_cust) - 1;
        let n = 5 + self.r.below(11);
        let mut lines = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let i = self.nurand(8191, 1, ITEMS, self.c_item) - 1;
            let sw = if nw > 1 && self.r.below(100) == 0 { (w + 1 + self.r.below(nw - 1)) % nw } else { w };
            lines.push((sw, i, 1 + self.r.below(10)));
        }
        let all_local = lines.iter().all(|x| x.0 == w) as u64;
        let h = &mut self.h;
        let wr = h.layout.row(Table::Warehouse, w);
        h.load(out, wr + 8);
        let dd = w * DISTRICTS + d;
        let dr = h.layout.row(Table::District, dd);
        h.load(out, dr + 8);
        let o = h.load(out, dr + 24);
        h.write(out, dr + 24, &[o + 1]);
        let cr = h.layout.row(Table::Customer, dd * CUSTOMERS + c);
        for col in 1..5 {
            h.load(out, cr + 8 * col);
        }
        self.clock += 1;
        let slot = (o - 1) % ring;
        let or = h.layout.row(Table::Order, dd * ring + slot);
        h.write(out, or, &[o, pack(c + 1, d, w), self.clock, n << 8 | all_local << 16]);
        let nr = h.layout.row(Table::NewOrder, dd * ring + slot);
        h.write(out, nr, &[pack(o, d, w)]);
        for (k, &(sw, i, qty)) in lines.iter().enumerate() {
            let ir = h.layout.row(Table::Item, i);
            h.copy_loads(out, ir, Table::Item.words() * 8);
            let price = h.peek(ir + 16);
            let sr = h.layout.row(Table::Stock, sw * ITEMS + i);
            let q = h.load(out, sr + 8);
            let dist = sr + 8 * (5 + 3 * d);
            h.copy_loads(out, dist, 24);
            h.copy_loads(out, sr + 8 * 35, 32);
            let (ytd, cnt, remote) = (h.peek(sr + 16), h.peek(sr + 24), h.peek(sr + 32));
            let q2 = if q >= qty + 10 { q - qty } else { q + 91 - qty };
            h.write(out, sr + 8, &[q2, ytd + qty, cnt + 1, remote + (sw != w) as u64]);
            let lr = h.layout.row(Table::OrderLine, (dd * ring + slot) * MAX_LINES + k as u64);
            let info = [h.peek(dist), h.peek(dist + 8), h.peek(dist + 16)];
            h.write(
                out,
                lr,
                &[pack(o, d, w) | (k as u64 + 1) << 48, i + 1, (sw + 1) | qty << 32, qty * price, 0, info[0], info[1], info[2]],
            );
        }
        NewOrder { w, d, o_id: o, lines }
    }
}

impl Generator for Tpcc {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (populate, orders) = (std::mem::take(&mut self.populate), self.p.ops_per_tx.draw(&mut self.r));
        transaction(self, out, populate, orders, |g| &mut g.h, Self::new_order);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pheap::tests::check_stream;
    use std::collections::HashMap;

    #[test]
    fn new_orders_advance_districts_fill_rings_and_move_stock() {
        let p = TpccParams { warehouses: 2, orders_per_district: 3050, ..TpccParams::default() };
        let mut g = Tpcc::new(3, p).unwrap();
        let l = &g.h.layout;
        // The initial database as the specification sets it.
        assert_eq!(g.h.peek(l.row(Table::District, 13) + 24), 3001);
        let q0 = g.h.peek(l.row(Table::Stock, 5) + 8);
        assert!((10..=100).contains(&q0));
        assert_eq!(g.h.peek(l.row(Table::NewOrder, 2999)), pack(3000, 0, 0));
        assert_eq!(g.h.peek(l.row(Table::NewOrder, 2099)), 0, "order 2100 was delivered");
        let mut expect_next: HashMap<(u64, u64), u64> = HashMap::new();
        let mut stock_orders: HashMap<(u64, u64), u64> = HashMap::new();
        let mut ev = Vec::new();
        for _ in 0..1500 {
            let mut v = Vec::new();
            g.h.begin(&mut v);
            let no = g.new_order(&mut v);
            g.h.commit(&mut v);
            let next = expect_next.entry((no.w, no.d)).or_insert(3001);
            assert_eq!(no.o_id, *next, "order ids are consecutive per district");
            *next += 1;
            assert!((5..=15).contains(&no.lines.len()));
            for &(sw, i, _) in &no.lines {
                *stock_orders.entry((sw, i)).or_insert(0) += 1;
            }
            let l = &g.h.layout;
            let dd = no.w * DISTRICTS + no.d;
            let slot = (no.o_id - 1) % l.ring;
            let or = l.row(Table::Order, dd * l.ring + slot);
            assert_eq!(g.h.peek(or), no.o_id);
            assert_eq!(g.h.peek(or + 24) >> 8 & 0xFF, no.lines.len() as u64);
            let lr = l.row(Table::OrderLine, (dd * l.ring + slot) * MAX_LINES);
            assert_eq!(g.h.peek(lr + 8), no.lines[0].1 + 1);
            ev.extend(v);
        }
        assert!(expect_next.values().any(|&n| n > 3051), "some ring wrapped onto initial orders");
        let l = &g.h.layout;
        for (&(sw, i), &n) in &stock_orders {
            let sr = l.row(Table::Stock, sw * ITEMS + i);
            assert_eq!(g.h.peek(sr + 24), n, "s_order_cnt of item {i}");
            assert!((1..=100).contains(&g.h.peek(sr + 8)), "quantity stays in range");
        }
        for (&(w, d), &n) in &expect_next {
            assert_eq!(g.h.peek(l.row(Table::District, w * DISTRICTS + d) + 24), n);
        }
        check_stream(&ev, &g.h);
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Tpcc::new(seed, TpccParams { warehouses: 1, ..TpccParams::default() }).ok().unwrap()
        });
    }
}
