"""The XML document that spmsim's `xalan` program transforms: a trading
company's database (regions, a tree of product categories, products with
descriptions, customers, and orders of several lines each), generated from
a seed so that every machine makes the same bytes. Written for spmsim's
suite (configs/suite/spec2017-stand-ins.toml), where Xalan-C++ turns it
into an HTML report with xalan-report.xsl.

usage: python3 xalan-orders.py OUT CUSTOMERS SEED

Products, orders and categories grow with CUSTOMERS. The random numbers
are a 64-bit linear congruential generator of our own, not Python's
`random`, so the document cannot change with the Python version.
"""

import sys


class Lcg:
    def __init__(self, seed):
        self.state = seed & (2**64 - 1)

    def next(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        return self.state >> 33

    def below(self, n):
        return self.next() % n

    def pick(self, seq):
        return seq[self.below(len(seq))]


SYLLABLES = [
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "an", "el", "or", "us",
    "ber", "dan", "fen", "gar", "hol", "jor", "kel", "mar", "nor", "pel",
    "ros", "tar", "ven", "wil", "ix", "ta", "ri", "mo",
]
NOUNS = [
    "lamp", "kettle", "chair", "drill", "cable", "blanket", "jacket", "filter",
    "pump", "valve", "pencil", "notebook", "bottle", "helmet", "glove", "hinge",
    "bracket", "speaker", "battery", "charger", "scale", "mirror", "shelf",
    "basket", "brush", "clamp", "sensor", "switch", "tile", "rope",
]
ADJECTIVES = [
    "compact", "sturdy", "folding", "wireless", "heavy", "light", "classic",
    "modern", "outdoor", "quiet", "rapid", "smart", "soft", "steel", "wooden",
    "waterproof", "portable", "premium", "basic", "extra",
]
WORDS = [
    "the", "a", "with", "for", "and", "of", "in", "every", "easy", "daily",
    "use", "home", "workshop", "garden", "office", "travel", "long", "life",
    "fits", "most", "standard", "sizes", "made", "from", "recycled", "material",
    "tested", "quality", "two", "year", "warranty", "includes", "spare", "parts",
    "simple", "assembly", "design", "strong", "finish", "clean", "safe", "kids",
]
STATUSES = ["shipped", "shipped", "shipped", "delivered", "delivered", "open", "returned", "cancelled"]
TIERS = ["standard", "standard", "standard", "silver", "silver", "gold"]


def word(r, lo, hi):
    return "".join(r.pick(SYLLABLES) for _ in range(lo + r.below(hi - lo + 1)))


def date(r, first_year, years):
    return "%04d-%02d-%02d" % (first_year + r.below(years), 1 + r.below(12), 1 + r.below(28))


def generate(customers, seed):
    r = Lcg(seed)
    n_regions = 12
    n_categories = max(8, customers // 60)
    n_products = max(20, customers * 2 // 5)
    n_orders = customers * 3
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n']
    out.append('<company name="%s trading" customers="%d" seed="%d">\n' % (word(r, 2, 3).capitalize(), customers, seed))
    out.append(" <regions>\n")
    for i in range(n_regions):
        out.append('  <region code="R%02d" name="%s"/>\n' % (i, word(r, 2, 4).capitalize()))
    out.append(" </regions>\n <categories>\n")
    # A tree: each category's parent comes before it; the first few are roots.
    for i in range(n_categories):
        parent = "" if i < 4 else ' parent="K%03d"' % r.below(i)
        out.append('  <category code="K%03d" name="%s"%s/>\n' % (i, word(r, 2, 3).capitalize(), parent))
    out.append(" </categories>\n <products>\n")
    prices = []
    for i in range(n_products):
        cents = 99 + r.below(40000)
        prices.append(cents)
        name = "%s %s %s" % (r.pick(ADJECTIVES), word(r, 1, 2), r.pick(NOUNS))
        desc = " ".join(r.pick(WORDS) for _ in range(8 + r.below(25)))
        out.append(
            '  <product sku="P%05d" category="K%03d" price="%d.%02d" weight="%d.%03d" stock="%d">\n'
            "   <name>%s</name>\n   <description>%s</description>\n  </product>\n"
            % (i, r.below(n_categories), cents // 100, cents % 100, r.below(30), r.below(1000), r.below(500), name, desc)
        )
    out.append(" </products>\n <customers>\n")
    for i in range(customers):
        first, last = word(r, 1, 2).capitalize(), word(r, 2, 3).capitalize()
        out.append(
            '  <customer id="C%05d" region="R%02d" since="%s" tier="%s">\n'
            "   <name><first>%s</first><last>%s</last></name>\n"
            "   <email>%s.%s@%s.example</email>\n  </customer>\n"
            % (i, r.below(n_regions), date(r, 2010, 13), r.pick(TIERS), first, last, first.lower(), last.lower(), word(r, 2, 3))
        )
    out.append(" </customers>\n <orders>\n")
    for i in range(n_orders):
        # Some customers buy far more often than others.
        c = r.below(1 + r.below(customers))
        out.append('  <order id="O%06d" customer="C%05d" date="%s" status="%s">\n' % (i, c, date(r, 2021, 3), r.pick(STATUSES)))
        for _ in range(1 + r.below(6)):
            p = r.below(1 + r.below(n_products))
            discount = r.pick([0, 0, 0, 5, 10, 15, 25])
            out.append('   <line sku="P%05d" qty="%d" discount="%d"/>\n' % (p, 1 + r.below(9), discount))
        out.append("  </order>\n")
    out.append(" </orders>\n</company>\n")
    return "".join(out)


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: xalan-orders.py OUT CUSTOMERS SEED\n")
        sys.exit(2)
    customers, seed = int(sys.argv[2]), int(sys.argv[3])
    if customers < 1:
        sys.stderr.write("CUSTOMERS must be at least 1\n")
        sys.exit(2)
    with open(sys.argv[1], "w", encoding="utf-8", newline="\n") as f:
        f.write(generate(customers, seed))


if __name__ == "__main__":
    main()
