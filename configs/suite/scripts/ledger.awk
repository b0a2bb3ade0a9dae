# spmsim suite, gawk entry: a report over the generated transaction log
# (field splitting, associative arrays, string functions, sorting).
BEGIN { FS = "," }
NR == 1 { next }
{
    split($1, d, "-")
    month = d[2] + 0
    amt = $4 + 0
    if ($5 == "refund") amt = -amt
    sum[$3] += amt
    cnt[$3]++
    user[$2] += amt
    seen[$2]++
    per_month[month, $3] += amt
    memo = $6
    gsub(/[0-9]/, "#", memo)
    shapes[memo]++
    last[$2] = $1
    key = toupper(substr($2, 5, 2)) "-" $3
    pairs[key] += 1
}
END {
    n = asorti(sum, cats)
    for (i = 1; i <= n; i++)
        printf "%-8s %12.2f %6d\n", cats[i], sum[cats[i]], cnt[cats[i]]
    for (m = 1; m <= 12; m++) {
        line = sprintf("%02d", m)
        for (i = 1; i <= n; i++)
            line = line sprintf(" %10.2f", per_month[m, cats[i]])
        print line
    }
    k = 0
    for (u in user)
        top[++k] = sprintf("%012.2f %s %d %s", user[u] + 1e6, u, seen[u], last[u])
    asort(top)
    for (i = k; i > k - 20 && i > 0; i--)
        print top[i]
    s = 0
    for (m in shapes) s++
    p = 0
    for (m in pairs) if (pairs[m] > 3) p++
    print s, "memo shapes,", p, "busy pairs"
}
