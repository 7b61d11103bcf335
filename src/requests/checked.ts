// Which requests have been checked. A request is checked once on its way to the rules: by its
// builder, when the CLI or the MCP server wants the refusal before it reads or runs anything
// (the check functions return the request as checked), else by the Ledger method it reaches (a
// library caller's). The Ledger asks `isChecked` and does not check again.
//
// Policy: by identity, not by a mark inside the object: a copy of a checked request (`{...req}`)
// is a new request and is checked again. The checked request is frozen, its lists copied, so it
// stays what was checked.
const CHECKED = new WeakSet<object>();

/** `req`, frozen and known as checked. Only the check functions of this folder call it. */
export function checked<T extends object>(req: T): Readonly<T> {
  Object.freeze(req);
  CHECKED.add(req);
  return req;
}

export function isChecked(req: unknown): boolean {
  return typeof req === 'object' && req !== null && CHECKED.has(req);
}

/** The request as checked: `req` itself when it was, else what `check` makes of it. */
export function checkOnce<R extends object, C>(req: R | C, check: (req: R) => C): C {
  return isChecked(req) ? (req as C) : check(req as R);
}
