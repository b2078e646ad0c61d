#!/usr/bin/env node
// Writes an Arrow IPC stream with the JS apache-arrow package from a JSON
// description: {batch_sizes: [n1, n2, ...] (optional; one batch if absent),
// columns: [{name, type: "utf8"|"large_utf8"|"int32"|"float64"|"bool", values}]}.
// null is a null; a float64 value may be a string: "NaN", "Inf", "-Inf" or a number
// written with 17 significant digits (exact, unlike most JSON writers).
// No dictionaries: every column is built with its explicit type.
// Usage: node write.cjs <description.json> <out.arrows>
'use strict';
const fs = require('fs');
const arrow = require('apache-arrow');

const types = {
  utf8: () => new arrow.Utf8(),
  large_utf8: () => new arrow.LargeUtf8(),
  int32: () => new arrow.Int32(),
  float64: () => new arrow.Float64(),
  bool: () => new arrow.Bool(),
};

function value(type, v) {
  if (type === 'float64' && typeof v === 'string') {
    const special = { NaN: NaN, Inf: Infinity, '-Inf': -Infinity }[v];
    if (special !== undefined) return special;
    const x = Number(v);
    if (Number.isNaN(x)) throw new Error(`not a number: ${v}`);
    return x;
  }
  return v;
}

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node write.cjs <description.json> <out.arrows>');
  process.exit(2);
}
const desc = JSON.parse(fs.readFileSync(input, 'utf8'));
const cols = desc.columns || [];
const nrow = cols.length ? cols[0].values.length : desc.num_rows || 0;
const sizes = desc.batch_sizes || [nrow];
if (sizes.reduce((a, b) => a + b, 0) !== nrow) throw new Error('batch_sizes do not add up to the row count');

const fields = cols.map((c) => {
  if (!types[c.type]) throw new Error(`unknown type ${c.type}`);
  return new arrow.Field(c.name, types[c.type](), true);
});
const schema = new arrow.Schema(fields);
const batches = [];
let start = 0;
for (const n of sizes) {
  const children = cols.map((c, j) => {
    // only null is a null (a NaN double stays a value)
    const b = arrow.makeBuilder({ type: fields[j].type, nullValues: [null] });
    for (let i = start; i < start + n; i++) b.append(value(c.type, c.values[i]));
    return b.finish().flush();
  });
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children });
  batches.push(new arrow.RecordBatch(schema, data));
  start += n;
}
const table = new arrow.Table(schema, batches);
fs.writeFileSync(output, arrow.tableToIPC(table, 'stream'));
