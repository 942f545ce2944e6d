/**
 * Shape descriptions of JSON values and a walker that compares a value with one, giving every
 * difference as a readable path: `data[0].paidAt: expected string|null, got number 1765432100`.
 * Objects are open (extra fields are fine: the SDKs ignore unknown fields); a field is required
 * unless its shape accepts `absent`.
 */
export type Shape =
  | { kind: 'string'; pattern?: RegExp; label?: string }
  | { kind: 'literal'; value: string | number | boolean }
  | { kind: 'boolean' }
  | { kind: 'number' }
  | { kind: 'null' }
  | { kind: 'absent' }
  | { kind: 'union'; of: Shape[] }
  | { kind: 'object'; fields: Record<string, Shape> }
  | { kind: 'array'; of: Shape };

/** One difference: where, what the contract says, what the service sent. */
export interface Diff {
  at: string;
  expected: string;
  got: string;
}

export const str = (pattern?: RegExp, label?: string): Shape => ({ kind: 'string', pattern, label });
export const lit = (value: string | number | boolean): Shape => ({ kind: 'literal', value });
export const bool: Shape = { kind: 'boolean' };
export const num: Shape = { kind: 'number' };
export const nul: Shape = { kind: 'null' };
export const absent: Shape = { kind: 'absent' };
export const oneOf = (...of: Shape[]): Shape => ({ kind: 'union', of });
export const nullable = (shape: Shape): Shape => oneOf(shape, nul);
export const obj = (fields: Record<string, Shape>): Shape => ({ kind: 'object', fields });
export const arr = (of: Shape): Shape => ({ kind: 'array', of });
export const enumOf = (values: readonly string[]): Shape => oneOf(...values.map((v) => lit(v)));

/** The shape in a few words: `string (ISO 8601 UTC, ms)|null`, `"success"`, `object`. */
export function describe(shape: Shape): string {
  switch (shape.kind) {
    case 'string':
      return shape.label ? `string (${shape.label})` : 'string';
    case 'literal':
      return JSON.stringify(shape.value);
    case 'union':
      return shape.of.map(describe).join('|');
    default:
      return shape.kind;
  }
}

const MAX_PREVIEW = 60;

/** A value in a few words: `absent`, `null`, `number 12`, `string "abc"`, `object`, `array(3)`. */
export function preview(value: unknown): string {
  if (value === undefined) return 'absent';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array(${value.length})`;
  if (typeof value === 'object') return 'object';
  const text = JSON.stringify(value) ?? String(value);
  return `${typeof value} ${text.length > MAX_PREVIEW ? `${text.slice(0, MAX_PREVIEW - 1)}…` : text}`;
}

const join = (path: string, key: string | number) =>
  typeof key === 'number'
    ? `${path}[${key}]`
    : /^[A-Za-z_$][\w$]*$/.test(key)
      ? path
        ? `${path}.${key}`
        : key
      : `${path}[${JSON.stringify(key)}]`;

const loose = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

/** A rough kind of a value, to pick the union branch whose differences say most. */
const kindOf = (value: unknown) =>
  value === undefined ? 'absent' : value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
const kindsOf = (shape: Shape): string[] =>
  shape.kind === 'union' ? shape.of.flatMap(kindsOf) : [shape.kind === 'literal' ? typeof shape.value : shape.kind];

/** Every difference between `value` and `shape`, with paths under `path` (`''` for the body itself). */
export function compare(value: unknown, shape: Shape, path = ''): Diff[] {
  const at = path || '(body)';
  const differ = (): Diff[] => [{ at, expected: describe(shape), got: preview(value) }];
  switch (shape.kind) {
    case 'absent':
      return value === undefined ? [] : differ();
    case 'null':
      return value === null ? [] : differ();
    case 'boolean':
    case 'number':
      return typeof value === shape.kind && (shape.kind === 'boolean' || Number.isFinite(value)) ? [] : differ();
    case 'literal':
      return value === shape.value ? [] : differ();
    case 'string':
      return typeof value === 'string' && (!shape.pattern || shape.pattern.test(value)) ? [] : differ();
    case 'union': {
      const tries = shape.of.map((s) => compare(value, s, path));
      if (tries.some((d) => d.length === 0)) return [];
      // One branch of the value's own kind (an object, say): its differences are the precise ones.
      const same = shape.of.map((s, i) => [s, i] as const).filter(([s]) => s.kind !== 'literal' && kindsOf(s).includes(kindOf(value)));
      return same.length === 1 ? tries[same[0]![1]]! : differ();
    }
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return differ();
      const record = value as Record<string, unknown>;
      return Object.entries(shape.fields).flatMap(([name, field]) => {
        const diffs = compare(Object.hasOwn(record, name) ? record[name] : undefined, field, join(path, name));
        // A missing field that is there under another spelling (checkout_url for checkoutUrl): say so.
        const near = Object.hasOwn(record, name) ? undefined : Object.keys(record).find((k) => loose(k) === loose(name));
        return near === undefined
          ? diffs
          : diffs.map((d) =>
              d.got === 'absent' ? { ...d, got: `absent (there is ${JSON.stringify(near)}: ${preview(record[near])})` } : d,
            );
      });
    }
    case 'array':
      if (!Array.isArray(value)) return differ();
      return value.flatMap((item, i) => compare(item, shape.of, join(path, i)));
  }
}
