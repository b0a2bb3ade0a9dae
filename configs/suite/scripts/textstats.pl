#!/usr/bin/perl
# spmsim suite, perl entry: text processing over the generated corpus
# (word and bigram counts in hashes, sentence splitting, regex rewriting,
# sorting, a small template engine), in the spirit of SPEC's perlbench.
use strict;

my ($file, $rounds) = @ARGV;
$rounds //= 3;
open(my $fh, '<', $file) or die "$file: $!";
my (%freq, %bigram, %lens, @sentences);
my ($prev, $para) = ('', '');
while (my $line = <$fh>) {
    chomp $line;
    if ($line eq '') {
        push @sentences, split /(?<=[.?!])\s+/, $para;
        $para = '';
        next;
    }
    $para .= ($para eq '' ? '' : ' ') . $line;
    for my $w (split /[^A-Za-z0-9%.]+/, $line) {
        next if $w eq '';
        my $lw = lc $w;
        $lw =~ s/\.$//;
        $freq{$lw}++;
        $lens{length $lw}++;
        $bigram{"$prev $lw"}++ if $prev ne '';
        $prev = $lw;
    }
}
close $fh;

my ($n, $chars, %first) = (0, 0);
for my $round (1 .. $rounds) {
    for my $s (@sentences) {
        $n++;
        my ($f) = $s =~ /^(\w+)/;
        $first{lc $f}++ if defined $f;
        (my $t = $s) =~ s/\b(\w)(\w*)/\U$1\E$2/g;
        $t =~ tr/aeiou/AEIOU/;
        my @w = reverse split ' ', $t;
        $chars += length(join ' ', @w);
        $chars += () = $s =~ /[aeiou]{2}/g;
    }
}

my @top = grep { defined } (sort { $freq{$b} <=> $freq{$a} || $a cmp $b } keys %freq)[0 .. 49];
my @topb = grep { defined } (sort { $bigram{$b} <=> $bigram{$a} || $a cmp $b } keys %bigram)[0 .. 49];
printf "%-20s %8d\n", $_, $freq{$_} for @top;
printf "%-30s %8d\n", $_, $bigram{$_} for @topb;
printf "%2d letters: %d\n", $_, $lens{$_} for sort { $a <=> $b } keys %lens;

my $tpl = join '', map { "<li>{{word$_}} ({{count$_}})</li>\n" } 0 .. $#top;
my %vars = map { ("word$_" => $top[$_], "count$_" => $freq{$top[$_]}) } 0 .. $#top;
for my $round (1 .. 200) {
    (my $out = $tpl) =~ s/\{\{(\w+)\}\}/$vars{$1}/g;
    $chars += length $out;
}
print "sentences $n chars $chars distinct ", scalar(keys %freq), " first ", scalar(keys %first), "\n";
