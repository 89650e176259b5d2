import http from 'http';

export interface TextResponse {
  status: number;
  text: string;
  /** the response headers (names in lower case) */
  headers: http.IncomingHttpHeaders;
}

/** One HTTP request with an optional body; resolves with the status and the whole response body as text. */
export function requestText(url: string, options: http.RequestOptions, body?: string | Buffer): Promise<TextResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
