export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A tiny HTTP client for tests: JSON in, JSON out, credentials as the spec's headers. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly credentials: { apiKey?: string; orgId?: string },
  ) {}

  with(credentials: { apiKey?: string; orgId?: string }): ApiClient {
    return new ApiClient(this.baseUrl, credentials);
  }

  async request<T = any>(method: string, path: string, opts: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.credentials.apiKey !== undefined) headers.apiKey = this.credentials.apiKey;
    if (this.credentials.orgId !== undefined) headers.orgId = this.credentials.orgId;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, { headers });
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, { body, headers });
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PUT', path, { body, headers });
  }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PATCH', path, { body, headers });
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('DELETE', path, { headers });
  }
  graphql<T = any>(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>) {
    return this.request<T>('POST', '/graphql', { body: { query, variables }, headers });
  }
}
