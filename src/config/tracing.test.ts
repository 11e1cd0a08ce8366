import { describe, expect, it } from 'vitest';
import { loadConfig } from './index.js';
import { tracingOn, tracesUrl } from './tracing.js';

describe('tracing settings', () => {
  it('is off by default and turns on by itself when an OTLP endpoint is set', () => {
    expect(tracingOn(loadConfig({}).tracing)).toBe(false);
    expect(tracingOn(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing)).toBe(true);
    expect(tracingOn(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces' }).tracing)).toBe(true);
  });

  it('OTEL_ENABLED=false and OTEL_SDK_DISABLED=true win over an endpoint; OTEL_ENABLED=true needs none', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingOn(loadConfig({ ...endpoint, OTEL_ENABLED: 'false' }).tracing)).toBe(false);
    expect(tracingOn(loadConfig({ ...endpoint, OTEL_ENABLED: 'off' }).tracing)).toBe(false);
    expect(tracingOn(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).tracing)).toBe(false);
    expect(tracingOn(loadConfig({ ...endpoint, OTEL_ENABLED: 'true', OTEL_SDK_DISABLED: 'true' }).tracing)).toBe(false);
    expect(tracingOn(loadConfig({ OTEL_ENABLED: 'true' }).tracing)).toBe(true);
  });

  it('posts to <endpoint>/v1/traces, or to the traces endpoint as given, by default to a local collector', () => {
    expect(tracesUrl(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing)).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/otlp' }).tracing)).toBe('http://c:4318/otlp/v1/traces');
    expect(tracesUrl(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example/in' }).tracing)).toBe(
      'https://t.example/in',
    );
    expect(tracesUrl(loadConfig({ OTEL_ENABLED: 'true' }).tracing)).toBe('http://localhost:4318/v1/traces');
  });

  it('refuses what it cannot use, naming the variable', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/^OTEL_EXPORTER_OTLP_ENDPOINT: must be an http/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/^OTEL_EXPORTER_OTLP_PROTOCOL: /);
    expect(() => loadConfig({ OTEL_ENABLED: 'sometimes' })).toThrow(/^OTEL_ENABLED: /);
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(/^OTEL_TRACES_SAMPLER_ARG: /);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing).toMatchObject({
      protocol: 'http/json',
      sampleRatio: 0.25,
      serviceName: 'worker-platform',
    });
  });
});
