# spmsim suite, python entry: a word-level Markov model of the generated
# corpus, text generated from it with a fixed LCG, Huffman codes of the
# words, edit distances between generated sentences, and a small
# object-heavy simulation. Pure Python (builtins and heapq), deterministic
# with PYTHONHASHSEED=0 (set by the suite).
import heapq
import sys


def read_words(path):
    words = []
    with open(path) as f:
        for line in f:
            for w in line.split():
                w = w.strip(".,;:?!").lower()
                if w:
                    words.append(w)
    return words


def markov(words, n_out, seed):
    chain = {}
    for a, b, c in zip(words, words[1:], words[2:]):
        chain.setdefault((a, b), []).append(c)
    keys = sorted(chain)
    x = seed
    state = keys[x % len(keys)]
    out = []
    for _ in range(n_out):
        nexts = chain.get(state)
        if not nexts:
            state = keys[x % len(keys)]
            nexts = chain[state]
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        w = nexts[x % len(nexts)]
        out.append(w)
        state = (state[1], w)
    return out


def huffman(freq):
    heap = []
    members = {}
    for i, (sym, n) in enumerate(sorted(freq.items())):
        heap.append((n, i))
        members[i] = [sym]
    heapq.heapify(heap)
    code = dict.fromkeys(freq, "")
    nxt = len(heap)
    while len(heap) > 1:
        n1, a = heapq.heappop(heap)
        n2, b = heapq.heappop(heap)
        for s in members[a]:
            code[s] = "0" + code[s]
        for s in members[b]:
            code[s] = "1" + code[s]
        members[nxt] = members.pop(a) + members.pop(b)
        heapq.heappush(heap, (n1 + n2, nxt))
        nxt += 1
    return code


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


class Account:
    __slots__ = ("owner", "balance", "history")

    def __init__(self, owner):
        self.owner = owner
        self.balance = 0
        self.history = []

    def post(self, amount):
        self.balance += amount
        self.history.append(amount)
        if len(self.history) > 16:
            del self.history[:8]


def bank(words, steps):
    accounts = {w: Account(w) for w in sorted(set(words[:5000]))}
    names = sorted(accounts)
    x = 7
    for _ in range(steps):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        a = accounts[names[x % len(names)]]
        b = accounts[names[(x >> 20) % len(names)]]
        amount = (x >> 40) % 500
        a.post(-amount)
        b.post(amount)
    return sum(abs(a.balance) for a in accounts.values())


def main():
    words = read_words(sys.argv[1])
    freq = {}
    for w in words:
        freq[w] = freq.get(w, 0) + 1
    text = markov(words, 60000, 12345)
    code = huffman(freq)
    bits = sum(len(code[w]) for w in words)
    sentences = [text[i:i + 12] for i in range(0, len(text), 12)]
    dist = 0
    for s, t in zip(sentences, sentences[1:400]):
        dist += edit_distance(" ".join(s), " ".join(t))
    total = bank(words, 200000)
    print(len(words), len(freq), bits, dist, total)


main()
