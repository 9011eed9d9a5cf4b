// Whether an error means the service's database cannot answer right now (the server down or
// restarting, the network to it cut, every connection busy, a statement or a turn waited out):
// something to retry, which the API answers 503 servico_indisponivel with Retry-After
// (http/errors.ts), not a bug (500 erro_interno). Read from the error's shape, without the
// PostgreSQL driver (which a service on SQLite never loads):
// - SQLSTATE codes: class 08 (connection exception), 53 (insufficient resources: too many
//   connections, disk full, out of memory), 57P01-57P03 (the server shutting down or starting),
//   57014 (a statement cancelled by its timeout), 40001 and 40P01 (serialization failure,
//   deadlock: the transaction was undone and can be retried);
// - the driver's own messages when a connection ends or cannot be had in time;
// - the socket's errors when the server cannot be reached. In a request, the only sockets
//   besides the database's are the tax authority's, whose failures arrive as
//   AuthorityUnavailableError (503 autoridade_indisponivel) before this is asked.

const SQLSTATE_RETRYABLE = /^(08...|53...|57P0[123]|57014|40001|40P01)$/;

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

const DRIVER_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable)/;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SQLSTATE_RETRYABLE.test(code) || SOCKET_CODES.has(code))) return true;
  return typeof message === 'string' && DRIVER_MESSAGES.test(message);
}
