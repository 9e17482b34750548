/**
 * Meter events (metered usage), kept once per `identifier` (a repeat answers the event first recorded), and the
 * summaries a meter's usage adds up to over a time range.
 */
import { ApiError, invalidParam, missingParam } from './api-errors.ts';
import type { ProcessorContext } from './context.ts';
import { nestedParams, optionalInteger, optionalString, requiredInteger, requiredString, type Params } from './form.ts';
import { list, type ApiList, type MeterEvent, type MeterEventSummary } from './objects.ts';
import { newObjectId } from './store.ts';

/** The real API takes events from the past 35 days up to 5 minutes ahead. */
const OLDEST_SECONDS = 35 * 24 * 60 * 60;
const NEWEST_SECONDS = 5 * 60;

export function recordMeterEvent(context: ProcessorContext, params: Params): MeterEvent {
  const eventName = requiredString(params, 'event_name');
  const meter = context.store.meterByEventName(eventName);
  if (!meter) throw invalidParam('event_name', `No active meter was found for event_name ${eventName}.`);
  const payload = nestedParams(params, 'payload');
  const customerId = optionalString(payload, meter.customer_mapping.event_payload_key);
  if (!customerId) throw missingParam(`payload[${meter.customer_mapping.event_payload_key}]`);
  context.store.get('customer', customerId, `payload[${meter.customer_mapping.event_payload_key}]`);
  const value = optionalString(payload, meter.value_settings.event_payload_key);
  if (value === undefined) throw missingParam(`payload[${meter.value_settings.event_payload_key}]`);
  if (!/^\d+$/.test(value)) throw invalidParam(`payload[${meter.value_settings.event_payload_key}]`, `The meter event value must be a whole number, not ${value}.`);
  const now = context.store.now();
  const timestamp = optionalInteger(params, 'timestamp') ?? now;
  if (timestamp < now - OLDEST_SECONDS || timestamp > now + NEWEST_SECONDS) {
    throw invalidParam('timestamp', 'The timestamp must be within the past 35 days and at most 5 minutes in the future.');
  }
  const identifier = optionalString(params, 'identifier') ?? newObjectId('mtrevt');
  const recorded = context.store.meterEvents.get(identifier);
  if (recorded) return recorded;
  const event: MeterEvent = {
    object: 'billing.meter_event',
    created: now,
    event_name: eventName,
    identifier,
    livemode: false,
    payload: Object.fromEntries(Object.entries(payload).filter((entry): entry is [string, string] => typeof entry[1] === 'string')),
    timestamp,
  };
  context.store.meterEvents.set(identifier, event);
  return event;
}

/** `GET /v1/billing/meters/:id/event_summaries`: one summary of the customer's usage in [start_time, end_time). */
export function meterEventSummaries(context: ProcessorContext, meterId: string, params: Params): ApiList<MeterEventSummary> {
  const meter = context.store.get('billing.meter', meterId);
  const customer = requiredString(params, 'customer');
  const start = requiredInteger(params, 'start_time');
  const end = requiredInteger(params, 'end_time');
  if (end <= start) throw new ApiError(400, 'invalid_request_error', 'end_time must be after start_time.', { code: 'parameter_invalid', param: 'end_time' });
  const aggregated = [...context.store.meterEvents.values()]
    .filter((event) => event.event_name === meter.event_name && event.payload[meter.customer_mapping.event_payload_key] === customer)
    .filter((event) => event.timestamp >= start && event.timestamp < end)
    .reduce((sum, event) => sum + Number(event.payload[meter.value_settings.event_payload_key]), 0);
  const summary: MeterEventSummary = { id: newObjectId('mtrsum'), object: 'billing.meter_event_summary', aggregated_value: aggregated, end_time: end, livemode: false, meter: meter.id, start_time: start };
  return list([summary], `/v1/billing/meters/${meter.id}/event_summaries`);
}
