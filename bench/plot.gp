# SPDX-License-Identifier: MIT
# plot.gp - draws the CSV of bakery-bench as SVG plots:
#   bench-throughput.svg   contended acquisitions/s against the process count
#   bench-cpu.svg          CPU time per acquisition against the process count
#   bench-uncontended.svg  uncontended lock+unlock time per mechanism
#   bench-wait.svg         99th percentile wait against the process count
#
#   gnuplot -e "csv='bench/results.csv'; outdir='docs'" bench/plot.gp
#   gnuplot -e "csv='bench/results.csv'; outdir='.'; fmt='png'" bench/plot.gp
#
# `make bench` runs it when gnuplot is installed.  Rows are picked by their
# test and mechanism columns; libbakery rows of the large region (the scaling
# runs) are left out of the per-process plots.

if (!exists("csv")) csv = "bench/results.csv"
if (!exists("outdir")) outdir = "docs"
if (!exists("slots")) slots = 64
if (!exists("fmt")) fmt = "svg"

# svg (the default) or png, at WIDTH x HEIGHT
png_term = "set terminal pngcairo size %d,%d enhanced font 'sans,10' background rgb 'white'"
svg_term = "set terminal svg size %d,%d dynamic enhanced font 'sans,12' background rgb 'white'"
term(w, h) = sprintf(fmt eq "png" ? png_term : svg_term, w, h)
out(name) = sprintf("set output '%s/%s.%s'", outdir, name, fmt)

set datafile separator ","
set datafile commentschars "#"
set datafile columnheaders      # columns are picked by their CSV header
eval term(800, 480)
set grid ytics mytics lc rgb "#dddddd"
set key outside right top
set border 3
set tics nomirror

mechs = "robust-mutex lamport boulangerie black-white jayanti ticket posix-sem ofd-lock flock"
# libbakery solid and thick, the others thinner and dashed
is_bakery(m) = (m eq "lamport" || m eq "boulangerie" || m eq "black-white" || m eq "jayanti")
lw(m) = is_bakery(m) || m eq "robust-mutex" ? 2.5 : 1.5
dt(m) = is_bakery(m) || m eq "robust-mutex" ? 1 : 2
color(m) = m eq "robust-mutex" ? "#000000" : m eq "lamport" ? "#1b9e77" : \
           m eq "boulangerie" ? "#d95f02" : m eq "black-white" ? "#7570b3" : \
           m eq "jayanti" ? "#e7298a" : m eq "ticket" ? "#66a61e" : \
           m eq "posix-sem" ? "#e6ab02" : m eq "ofd-lock" ? "#a6761d" : "#888888"

# a contended row of mechanism m in the default region, else NaN (the CSV
# lists each mechanism's rows together, so the points of one line are
# consecutive and get joined)
pick(m, col) = (strcol("test") eq "contended" && strcol("mechanism") eq m && \
                strcol("status") eq "ok" && \
                (column("slots") == 0 || column("slots") == slots)) ? column(col) : NaN

set xlabel "processes (2 CPUs: 4 and 8 oversubscribe them)"
set xtics (2, 4, 8)
set xrange [1.5:8.5]
set logscale y

eval out("bench-throughput")
set title "Contended throughput: lock / check / unlock loop"
set ylabel "acquisitions per second (all processes)"
set format y "%.0s%c"
plot for [m in mechs] csv using (pick(m, "procs")):(pick(m, "acq_per_s")) \
     with linespoints lw lw(m) dt dt(m) lc rgb color(m) pt 7 ps 0.6 title m

eval out("bench-cpu")
set title "CPU time per acquisition (user + system, all processes)"
set ylabel "CPU per acquisition"
set format y "%.0s%cs"
plot for [m in mechs] csv using (pick(m, "procs")):(pick(m, "cpu_ns_per_acq") * 1e-9) \
     with linespoints lw lw(m) dt dt(m) lc rgb color(m) pt 7 ps 0.6 title m

eval out("bench-wait")
set title "Wait from the lock call to acquisition, 99th percentile"
set ylabel "p99 wait"
plot for [m in mechs] csv using (pick(m, "procs")):(pick(m, "wait_p99_ns") * 1e-9) \
     with linespoints lw lw(m) dt dt(m) lc rgb color(m) pt 7 ps 0.6 title m

# Uncontended: one bar per mechanism (libbakery in both region sizes).
# The rows are first copied to a datablock, so that the bars are numbered
# without gaps.
label(x) = (column("slots") > 0) ? \
           sprintf("%s/%d", strcol("mechanism"), column("slots")) : strcol("mechanism")
set table $unc
plot csv using (label(0)):(column("ns_per_op") * 1e-9) with table \
     if (strcol("test") eq "uncontended" && strcol("status") eq "ok")
unset table
set datafile separator whitespace

eval term(900, 480)
eval out("bench-uncontended")
set title "Uncontended lock+unlock, one process (best run; libbakery as algorithm/slots)"
set xlabel ""
set ylabel "time per lock+unlock"
set xrange [-0.6:*]
set xtics rotate by -40 left
set format y "%.0s%cs"
set style fill solid 0.6 border -1
set boxwidth 0.7
set key off
ns(v) = v < 1e-6 ? sprintf("%.1f ns", v * 1e9) : sprintf("%.2f us", v * 1e6)
plot $unc using 0:2:xtic(1) with boxes lc rgb "#4477aa", \
     $unc using 0:2:(ns($2)) with labels offset 0,0.7 font ",9"
