// Test helpers for code that calls the console API through this client (the CLI's tests, the package's own).

/** A fetch that records each request and answers with `answer(request)`. */
export function fakeFetch(answer: (request: Request) => Response | Promise<Response>): { fetch: typeof fetch; requests: Request[] } {
  const requests: Request[] = [];
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    requests.push(request);
    return answer(request);
  };
  return { fetch: fetchImpl, requests };
}

/** A JSON answer with `status` (and a status text, which the CLI prints). */
export function jsonAnswer(status: number, body: unknown, statusText = ''): Response {
  return new Response(JSON.stringify(body), { status, statusText, headers: { 'content-type': 'application/json' } });
}
