// api.js - the pages' data: GET /api/<page>?run=..&rank=.. from `nnprof ui`, or, in a
// report written by `nnprof report`, the same documents inlined in window.NNP_REPORT. A
// run still being analysed answers 202 with its progress: get() shows it through
// onProgress and asks again until the run is ready.

export const report = window.NNP_REPORT || null;
const POLL_MS = 500;

export class ApiError extends Error {}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  return q.toString();
}

export async function get(page, params = {}, onProgress = () => {}) {
  if (report) {
    const key = `${page}|${params.run}|${params.rank ?? ''}`;
    const doc = report.pages[key];
    if (!doc) throw new ApiError(`not in this report: ${page}${params.step ? ' for one step' : ''}${params.at !== undefined ? ' at a point' : ''} (open it with nnprof ui)`);
    return doc;
  }
  for (;;) {
    const res = await fetch(`/api/${page}?${query(params)}`);
    const body = await res.json();
    if (res.status === 200) return body;
    if (res.status === 202) {
      onProgress(body);
      await new Promise((r) => setTimeout(r, POLL_MS));
      continue;
    }
    throw new ApiError(body.error || `HTTP ${res.status}`);
  }
}

export async function runs() {
  if (report) return { root: report.root, runs: report.runs };
  const res = await fetch('/api/runs');
  return res.json();
}

export function downloadUrl(params) {
  return `/api/timeline_download?${query(params)}`;
}
