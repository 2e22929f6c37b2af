/**
 * The mailbox an address delivers to, for per-address limits on sign-in mails (the triggers
 * service's links, the relayer's codes): lower-cased, without a subaddress (`victim+1@x` and
 * `VICTIM@x` reach `victim@x`), so tags cannot multiply one mailbox's budget.
 */
export function mailboxOf(email: string): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at).replace(/\+.*$/, "");
  return `${local}${email.slice(at)}`.toLowerCase();
}
