// table.js - the sortable, searchable tables of every page. Columns: {key, label, fmt,
// num, title}. Clicking a header sorts by it (again: reverses); a search box filters rows
// with fuzzy matching on the `search` fields. Large tables render the first `limit` rows.
import { h } from './ui.js';
import { fuzzyFilter } from './fuzzy.js';

export function table({ columns, rows, sortKey, sortDesc = true, search, limit = 500, onRow, id, selected }) {
  let key = sortKey, desc = sortDesc, query = '';
  const tbody = h('tbody');
  const thead = h('thead');
  const count = h('span', { class: 'count' });
  const input = search ? h('input', { type: 'search', class: 'search', placeholder: `search ${search.join(' / ')} (fuzzy)`, 'data-search': id }) : null;

  const sorted = () => {
    let out = query ? fuzzyFilter(rows, query, search) : rows.slice();
    if (key && !query) {
      const col = columns.find((c) => c.key === key);
      out.sort((a, b) => {
        const x = a[key], y = b[key];
        let c;
        // A sort key that is no column (e.g. "impact") sorts numbers as numbers.
        const numeric = col ? col.num : typeof x === 'number' || typeof y === 'number';
        if (numeric) c = (x ?? -Infinity) - (y ?? -Infinity);
        else c = String(x ?? '').localeCompare(String(y ?? ''));
        return desc ? -c : c;
      });
    }
    return out;
  };

  const render = () => {
    thead.replaceChildren(h('tr', {}, ...columns.map((c) => {
      const th = h('th', { class: c.num ? 'num' : '', 'data-col': c.key, title: c.title || 'click to sort' }, c.label,
        key === c.key ? h('span', { class: 'arrow', text: desc ? ' ▼' : ' ▲' }) : null);
      th.addEventListener('click', () => { if (key === c.key) desc = !desc; else { key = c.key; desc = !!c.num; } render(); });
      return th;
    })));
    const out = sorted();
    tbody.replaceChildren(...out.slice(0, limit).map((r) => {
      const tr = h('tr', { class: onRow ? 'clickable' : '' }, ...columns.map((c) => h('td', { class: c.num ? 'num' : '', 'data-col': c.key }, c.fmt ? c.fmt(r[c.key], r) : (r[c.key] ?? ''))));
      if (selected && selected(r)) tr.classList.add('selected');
      if (onRow) tr.addEventListener('click', () => { for (const x of tbody.children) x.classList.remove('selected'); tr.classList.add('selected'); onRow(r); });
      return tr;
    }));
    count.textContent = `${out.length.toLocaleString('en-US')} rows${out.length > limit ? ` (first ${limit} shown)` : ''}`;
  };
  if (input) input.addEventListener('input', () => { query = input.value.trim(); render(); });
  render();
  return h('div', { class: 'table-wrap', 'data-table': id },
    h('div', { class: 'table-tools' }, input, count),
    h('div', { class: 'scroll' }, h('table', { class: 'grid' }, thead, tbody)));
}
