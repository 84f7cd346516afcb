// fuzzy.js - fuzzy search on op names and types: every character of the query appears in
// order in the text (case-insensitive), as editors' "go to file" do. The score prefers
// contiguous runs and matches at word starts, so "mm" finds "MatMul" before "GEMM_m".

export function fuzzyScore(query, text) {
  const q = query.toLowerCase(), t = text.toLowerCase();
  if (!q) return 0;
  let score = 0, ti = 0, run = 0;
  for (let qi = 0; qi < q.length; qi++) {
    const found = t.indexOf(q[qi], ti);
    if (found < 0) return -1;
    run = found === ti ? run + 1 : 1;
    score += run * 2;
    if (found === 0 || '/_-. '.includes(t[found - 1])) score += 3;
    ti = found + 1;
  }
  return score - (t.length - q.length) * 0.01;
}

// Rows whose any of fields matches, best score first; an empty query keeps the order.
export function fuzzyFilter(rows, query, fields) {
  if (!query) return rows;
  const scored = [];
  for (const r of rows) {
    let best = -1;
    for (const f of fields) best = Math.max(best, fuzzyScore(query, String(r[f] ?? '')));
    if (best >= 0) scored.push([best, r]);
  }
  scored.sort((a, b) => b[0] - a[0]);
  return scored.map((s) => s[1]);
}
