/**
 * Who is calling: the result of authentication, the input of every permission decision. PURE.
 *
 * The subject of a principal, matched against event type authorization attributes, is
 * {data_type: <kind of the token's owner, e.g. "user" or "service">, value: <uid>}.
 */
export interface Principal {
  uid: string;
  /** The kind of the token's owner; the subject's data_type. */
  type: string;
  scopes: ReadonlySet<string>;
  /** uid equals the configured administrator (svc.oauth2.adminClientId), or authentication is off. */
  admin: boolean;
}

export interface Subject {
  data_type: string;
  value: string;
}

export function subjectOf(p: Principal): Subject {
  return { data_type: p.type, value: p.uid };
}
