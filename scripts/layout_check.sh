#!/usr/bin/env bash
# Outputs of commands covering every evaluate() route and every writer, for a
# refactor check: run once before and once after into two folders, then
#   scripts/layout_check.sh compare BEFORE_DIR AFTER_DIR
# Usage: scripts/layout_check.sh run OUT_DIR   (from the repository root; data in ../shared/data)
set -u
mode=${1:?run|compare}
norm() {  # stderr without progress bars, timings and the output folder's name
  tr '\r' '\n' | grep -v '%|' | sed -E -e "s#$1#OUT#g" -e 's/[0-9.]+ s\b/N s/g'
}
if [ "$mode" = compare ]; then
  a=${2:?} b=${3:?} rc=0
  for f in "$a"/*; do
    n=$(basename "$f")
    case "$n" in
      *.parquet) python - "$f" "$b/$n" <<'PY' || rc=1
import sys, polars as pl
x, y = pl.read_parquet(sys.argv[1]), pl.read_parquet(sys.argv[2])
ok = x.equals(y, null_equal=True) and x.schema == y.schema
print(("same  " if ok else "DIFF  ") + sys.argv[1].rsplit("/", 1)[-1])
sys.exit(0 if ok else 1)
PY
      ;;
      *.err) if diff -q <(norm "$a" <"$f") <(norm "$b" <"$b/$n") >/dev/null; then echo "same  $n"; else echo "DIFF  $n"; rc=1; fi ;;
      *) if cmp -s "$f" "$b/$n"; then echo "same  $n"; else echo "DIFF  $n"; rc=1; fi ;;
    esac
  done
  exit $rc
fi
out=${2:?OUT_DIR}
mkdir -p "$out"
D=../shared/data
T8=$D/trec8_adhoc
R8="$T8/runs/input.1.gz $T8/runs/input.8manexT3D1N0.gz $T8/runs/input.AntHoc1.gz $T8/runs/input.CL99SD.gz"
W12=$D/trec_web_2009_2014/qrels_topics/2012/qrels-for-ndeval.txt.gz
WR=$D/trec_web_2009_2014/baseline_runs_2012
TE=$D/trec_eval
run() {  # name, command...: stdout -> name.out, stderr + exit status -> name.err
  local name=$1; shift
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo "exit $?" >>"$out/$name.err"
}
run t8_all_trec_pq fasteval eval $T8/qrels.trec8.adhoc.gz $R8 -m all_trec -q -o "$out/t8_all_trec.parquet" --format parquet
run t8_all_trec_trec fasteval eval $T8/qrels.trec8.adhoc.gz $R8 -m all_trec -q
run t8_csv_ric fasteval eval $T8/qrels.trec8.adhoc.gz $R8 -m map -m P_10 -m RIC -q --format csv
run t8_json_c10 fasteval eval $T8/qrels.trec8.adhoc.gz $R8 -m official -c --compat 10 -N 528155 --format json
run t8_relstring fasteval eval $TE/qrels.test $TE/results.test -m relstring -m map -q
run t8_relstring_pq fasteval eval $TE/qrels.test $TE/results.test -m relstring.10 -m map -q --format parquet -o "$out/relstring.parquet"
run te_z fasteval eval $TE/qrels.test $TE/results.test -Z $TE/zscores_file -q -m all_trec
run te_jg fasteval eval $TE/qrels.123 $TE/results.test -R qrels_jg -q
run te_jg_pq fasteval eval $TE/qrels.123 $TE/results.test -R qrels_jg -q --format parquet -o "$out/jg.parquet"
run w12_eval fasteval eval $W12 $WR --run-id filename -m alpha_nDCG@20 -m ERR_IA@20 -m NRBP -q
run w12_eval_ndeval fasteval eval $W12 $WR --run-id filename --format ndeval
run w12_eval_pq fasteval eval $W12 $WR --run-id filename -m ndeval -q --format parquet -o "$out/w12_eval.parquet"
run w12_ndeval fasteval ndeval $W12 $WR --run-id filename --order traditional -M 100
run w12_ndeval_csv fasteval ndeval $W12 $WR --run-id filename -m alpha_nDCG@20 --format csv -c
run w12_ndeval_pq fasteval ndeval $W12 $WR --run-id filename --format parquet -o "$out/w12_ndeval.parquet"
run ric fasteval ric $T8/qrels.trec8.adhoc.gz $R8 -q
run ric_pq fasteval ric $T8/qrels.trec8.adhoc.gz $R8 --format parquet -o "$out/ric.parquet"
run infodiff fasteval infodiff $T8/qrels.trec8.adhoc.gz $R8
run correlate fasteval correlate $T8/qrels.trec8.adhoc.gz $R8
run hsa fasteval hsa $T8/qrels.trec8.adhoc.gz $R8 -q
run hsa_score_csv fasteval hsa $T8/qrels.trec8.adhoc.gz $R8 --values score --format csv
run hsa_pq fasteval hsa $T8/qrels.trec8.adhoc.gz $R8 --format parquet -o "$out/hsa.parquet"
rm -rf "$out/study_sub" "$out/study_div"
run study_sub fasteval study subsample $T8/qrels.trec8.adhoc.gz $R8 -m map -m P_10 -m RIC -m HSA --rates 0.2,1 --reps 3 --seed 1 -o "$out/study_sub" --no-plot
fasteval ingest $WR --run-id filename -o "$out/w12_runs.parquet" 2>/dev/null
run study_div fasteval study subsample $W12 "$out/w12_runs.parquet" -m alpha_nDCG@20 --rates 0.5 --reps 3 --seed 1 -o "$out/study_div" --no-plot
for s in study_sub study_div; do
  for f in summary full; do cp "$out/$s/$f.parquet" "$out/${s}_$f.parquet" 2>/dev/null; done
  cp "$out/$s/summary.csv" "$out/${s}_summary.csv" 2>/dev/null
  rm -rf "${out:?}/$s"
done
rm -f "$out/w12_runs.parquet"
run fuse_trec fasteval fuse $R8 -o "$out/fused.run"
run fuse_pq fasteval fuse $R8 -m combmnz --norm zscore -o "$out/fused.parquet"
run fuse_ub fasteval fuse $R8 -m naive --qrels $T8/qrels.trec8.adhoc.gz -o "$out/fused_ub.run"
run report fasteval report $T8/qrels.trec8.adhoc.gz $R8
run err_pq_no_o fasteval eval $T8/qrels.trec8.adhoc.gz $R8 --format parquet
run err_measure fasteval eval $T8/qrels.trec8.adhoc.gz $R8 -m nosuch
run err_mix fasteval eval $W12 $WR --run-id filename -m map -m alpha_nDCG@20
run err_div_default fasteval eval $W12 $WR --run-id filename --format parquet -o "$out/never.parquet"
