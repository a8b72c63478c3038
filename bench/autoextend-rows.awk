# bench/autoextend's table rows from its per-load statistics, one row per
# volume and step: the fastest run of each kind.
# Input, one line per load: kind (g growing, s static) volume_mib step_mib
# run seconds extends extend_bytes zero_fill_us worst_write_us file_bytes.
# Output: the CSV rows after bench/autoextend's header.
# zero_fill_ms is the mean over every extend row of every run, computed as
# sum / count / 1000 in that order, as a reader of the log would, so that the
# rounding to 0.01 ms agrees with it.
{
	key = $2 " " $3
	if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
	if ($1 == "g") {
		if (!(key in gs) || $5 < gs[key]) gs[key] = $5
		if ((key in gext) && gext[key] != $6) bad = bad " " $2 "/" $3
		gext[key] = $6; gbytes[key] = $7; gzf[key] += $8; gruns[key]++; gend[key] = $10
		if ($9 > gw[key]) gw[key] = $9
	} else {
		if (!(key in ss) || $5 < ss[key]) ss[key] = $5
		if ($6 > sext[key]) sext[key] = $6
		if ($9 > sw[key]) sw[key] = $9
	}
}
END {
	if (bad != "") { print "bench/autoextend: extends differ between runs for volume/step" bad > "/dev/stderr"; exit 1 }
	for (i = 1; i <= n; i++) { k = keys[i]; split(k, vs, " ")
		e = gext[k]; zf = gzf[k] / (gruns[k] * (e ? e : 1)) / 1000; pe = (gs[k] - ss[k]) * 1000 / (e ? e : 1)
		printf "%d,%d,%.2f,%.3f,%.3f,%d,%.0f,%d,%s,%s,%s,%.2f,%.2f\n", vs[1], vs[2],
			gend[k] / 1048576, gs[k], ss[k], e, gbytes[k] / 1048576, sext[k],
			e ? sprintf("%.2f", zf) : "-", e ? sprintf("%.2f", pe) : "-", e ? sprintf("%.2f", pe - zf) : "-",
			gw[k] / 1000, sw[k] / 1000
	}
}
