#!/usr/bin/env node
// Reads an Arrow IPC stream with the JS apache-arrow package and prints a JSON
// description: {num_rows, num_batches, columns: [{name, type, nullable, values}]}.
// Values: strings, numbers, booleans or null; non-finite doubles are the strings
// "NaN", "Inf" and "-Inf" (JSON has no such numbers).
// Usage: node describe.cjs <file.arrows>
'use strict';
const fs = require('fs');
const arrow = require('apache-arrow');

function typeName(t) {
  if (arrow.DataType.isUtf8(t)) return 'utf8';
  if (arrow.DataType.isLargeUtf8(t)) return 'large_utf8';
  if (arrow.DataType.isBool(t)) return 'bool';
  if (arrow.DataType.isInt(t)) return (t.isSigned ? 'int' : 'uint') + t.bitWidth;
  if (arrow.DataType.isFloat(t)) return 'float' + [16, 32, 64][t.precision];
  return 'other:' + String(t);
}

function jsonValue(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Inf' : '-Inf';
  if (typeof v === 'bigint') return v.toString();
  return v;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: node describe.cjs <file.arrows>');
  process.exit(2);
}
const table = arrow.tableFromIPC(fs.readFileSync(file));
const out = {
  num_rows: table.numRows,
  num_batches: table.batches.length,
  columns: table.schema.fields.map((f, j) => {
    const col = table.getChildAt(j);
    const values = new Array(table.numRows);
    for (let i = 0; i < table.numRows; i++) values[i] = jsonValue(col.get(i));
    return { name: f.name, type: typeName(f.type), nullable: f.nullable, values };
  }),
};
process.stdout.write(JSON.stringify(out));
