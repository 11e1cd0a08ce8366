import { z } from 'zod';
import { num, oneOf, optionalStr, setting, str } from './define.js';

/**
 * Tracing (OpenTelemetry, opt-in; src/tracing/, docs/operations.md#tracing). The exporter's names
 * are the standard OTEL_* variables, so an existing collector set-up applies as it is; the other
 * standard exporter variables (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION and their
 * _TRACES_ forms, OTEL_RESOURCE_ATTRIBUTES) are read by the exporter itself.
 */

/** An OTLP/HTTP endpoint: an http(s) URL, or unset. */
const endpoint = () => optionalStr().refine((v) => v === undefined || /^https?:\/\/[^\s/?#]+/i.test(v), 'must be an http:// or https:// URL');

/** auto / true / false. */
const onOffAuto = () =>
  z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['auto', 'true', 'false', '1', '0', 'yes', 'no', 'on', 'off']))
    .transform((v) => (v === 'auto' ? 'auto' : ['true', '1', 'yes', 'on'].includes(v)));

export const tracingSettings = {
  enabled: setting(
    'OTEL_ENABLED',
    onOffAuto(),
    'auto',
    'Tracing: true exports OpenTelemetry spans over OTLP/HTTP, false loads no tracing code at all; auto = on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and OTEL_SDK_DISABLED is not true).',
  ),
  sdkDisabled: setting('OTEL_SDK_DISABLED', optionalStr(), undefined, 'Standard OpenTelemetry switch: true turns tracing off whatever OTEL_ENABLED says.'),
  endpoint: setting(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    endpoint(),
    undefined,
    'OTLP/HTTP collector base URL (http://collector:4318); spans go to <endpoint>/v1/traces.',
  ),
  tracesEndpoint: setting(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    endpoint(),
    undefined,
    'Full URL spans are posted to, instead of <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces.',
  ),
  protocol: setting(
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    oneOf(['http/protobuf', 'http/json']),
    'http/protobuf',
    'OTLP encoding: http/protobuf or http/json (gRPC is not supported).',
  ),
  serviceName: setting('OTEL_SERVICE_NAME', str().trim().min(1).max(200), 'worker-platform', 'service.name of every span this process exports.'),
  sampleRatio: setting(
    'OTEL_TRACES_SAMPLER_ARG',
    num(0, 1),
    1,
    'Share of new traces recorded (0-1); a span joining a trace (a job run, a query) follows the decision of the trace it joins.',
  ),
};

/** Whether a process with these settings traces (OTEL_ENABLED, OTEL_SDK_DISABLED, the endpoints). */
export function tracingOn(t: {
  enabled: boolean | 'auto';
  sdkDisabled: string | undefined;
  endpoint: string | undefined;
  tracesEndpoint: string | undefined;
}): boolean {
  if (t.sdkDisabled?.toLowerCase() === 'true') return false;
  if (t.enabled === 'auto') return t.endpoint !== undefined || t.tracesEndpoint !== undefined;
  return t.enabled;
}

/** Where spans are posted: the traces endpoint as given, else `<endpoint>/v1/traces`; default the local collector's. */
export function tracesUrl(t: { endpoint: string | undefined; tracesEndpoint: string | undefined }): string {
  if (t.tracesEndpoint) return t.tracesEndpoint;
  return `${(t.endpoint ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
}
