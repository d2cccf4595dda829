/**
 * How deep a JSON value plat mcp passes on as structured content. The SDK serialises each answer with
 * JSON.stringify, which recurses: a response nested 100,000 deep made the send throw and the request went
 * unanswered. Past this bound the value goes as its text with a note (call.ts), measured with the one depth walk
 * every builder of nested data uses (requests/depth.ts).
 */
export const MAX_STRUCTURED_DEPTH = 256;
