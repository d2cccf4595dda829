/** What a socket-level error code means, in words a user can act on; one table for every place that reports one. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  ENOTFOUND: 'the host name could not be resolved',
  ERR_PLAT_NOT_LOOPBACK: 'the host name resolves to an address that is not loopback, and plat speaks plain http:// only to loopback',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'the server did not answer in time',
  UND_ERR_BODY_TIMEOUT: 'the server stopped sending the response',
  UND_ERR_SOCKET: 'the connection was closed unexpectedly',
  UND_ERR_CLOSED: 'the connection was closed unexpectedly',
  ERR_STREAM_PREMATURE_CLOSE: 'the connection was closed unexpectedly',
  UND_ERR_HEADERS_OVERFLOW: 'the server sent response headers that are too large',
  HPE_HEADER_OVERFLOW: 'the server sent response headers that are too large',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'the server sent a response that is too large',
};

/** A body that closed before its end, as Node's own stream helpers say it, for readers that watch the events. */
export function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

export function describeNetworkCode(code: string | undefined): string | undefined {
  return code ? REASONS[code] : undefined;
}
