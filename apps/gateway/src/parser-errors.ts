import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode } from '@strata/contracts';
import { renderError } from '@strata/platform';

/**
 * A request Node's parser refuses before any route sees it (a URL and headers
 * over its 16 KiB, a malformed request line) is answered in the general error
 * shape like every other error, instead of Node's bare status line.
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node does: answer only when no response on this connection has started (a pipelined one
    // would be corrupted), and never a reset connection.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, code, message } = parserRefusal(err.code);
    const body = JSON.stringify(renderError('general', { status, code, message }));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/** Node's own statuses for what its parser refuses, with a message of ours. */
function parserRefusal(code: string | undefined): { status: number; code: ErrorCode; message: string } {
  switch (code ?? '') {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: ErrorCode.VALIDATION_ERROR,
        message: 'The request line and headers together are larger than 16 KiB.',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: ErrorCode.PAYLOAD_TOO_LARGE, message: 'The chunk extensions are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: ErrorCode.TIMEOUT, message: 'The request did not arrive in time.' };
    default:
      return { status: 400, code: ErrorCode.VALIDATION_ERROR, message: 'The request could not be parsed as HTTP/1.1.' };
  }
}
