export { startLocalProcessor, type LocalProcessor, type LocalProcessorOptions } from './server.ts';
export { signWebhookPayload, SIGNATURE_HEADER } from './webhooks.ts';
export { DECLINED_CARD, PAYING_CARD } from './cards.ts';
export { API_VERSION } from './context.ts';
export { ENVELOPES_METER, METER_SEEDS, PRICE_SEEDS, type MeterSeed, type PriceSeed } from './seed.ts';
export type { MeterEvent, ProcessorEventObject } from './objects.ts';
