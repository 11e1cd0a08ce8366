-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "feed_status" AS ENUM ('pending', 'ok', 'error');

-- CreateEnum
CREATE TYPE "item_status" AS ENUM ('on_sale', 'sold');

-- CreateEnum
CREATE TYPE "pool_row_status" AS ENUM ('available', 'reserved', 'consumed');

-- CreateEnum
CREATE TYPE "message_role" AS ENUM ('system', 'user', 'assistant', 'tool');

-- CreateTable
CREATE TABLE "users" (
    "id" SERIAL NOT NULL,
    "username" VARCHAR(64) NOT NULL,
    "password_hash" TEXT NOT NULL,
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "feeds" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "title" TEXT,
    "site_url" TEXT,
    "refresh_interval_minutes" INTEGER NOT NULL DEFAULT 30,
    "status" "feed_status" NOT NULL DEFAULT 'pending',
    "last_fetched_at" TIMESTAMPTZ(3),
    "next_refresh_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "error_count" INTEGER NOT NULL DEFAULT 0,
    "etag" TEXT,
    "last_modified" TEXT,
    "article_count" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "feeds_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "articles" (
    "id" BIGSERIAL NOT NULL,
    "feed_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "guid" TEXT,
    "title" TEXT,
    "author" TEXT,
    "summary" TEXT,
    "content" TEXT,
    "published_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "articles_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ips" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "keyword" TEXT NOT NULL,
    "weight" DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "interval_seconds" INTEGER NOT NULL DEFAULT 7200,
    "last_crawled_at" TIMESTAMPTZ(3),
    "next_crawl_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ips_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "item_snapshots" (
    "id" BIGSERIAL NOT NULL,
    "ip_id" INTEGER NOT NULL,
    "source_id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "price" INTEGER NOT NULL,
    "status" "item_status" NOT NULL,
    "image_url" TEXT,
    "item_url" TEXT,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "sold_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "item_snapshots_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ip_stats_hourly" (
    "id" BIGSERIAL NOT NULL,
    "ip_id" INTEGER NOT NULL,
    "hour_bucket" TIMESTAMPTZ(3) NOT NULL,
    "inflow" INTEGER NOT NULL DEFAULT 0,
    "outflow" INTEGER NOT NULL DEFAULT 0,
    "liquidity_index" DECIMAL(10,4),
    "avg_price" DECIMAL(14,2),
    "min_price" INTEGER,
    "max_price" INTEGER,
    "price_sum" BIGINT NOT NULL DEFAULT 0,
    "sample_count" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ip_stats_hourly_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alerts" (
    "id" BIGSERIAL NOT NULL,
    "ip_id" INTEGER NOT NULL,
    "rule" TEXT NOT NULL,
    "hour_bucket" TIMESTAMPTZ(3) NOT NULL,
    "severity" TEXT NOT NULL DEFAULT 'warning',
    "message" TEXT NOT NULL,
    "value" DOUBLE PRECISION NOT NULL,
    "threshold" DOUBLE PRECISION NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alerts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "processed_results" (
    "task_id" TEXT NOT NULL,
    "ip_id" INTEGER NOT NULL,
    "item_count" INTEGER NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "processed_results_pkey" PRIMARY KEY ("task_id")
);

-- CreateTable
CREATE TABLE "titles" (
    "id" BIGSERIAL NOT NULL,
    "group_id" INTEGER NOT NULL,
    "batch_id" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "status" "pool_row_status" NOT NULL DEFAULT 'available',
    "reserved_at" TIMESTAMPTZ(3),
    "consumed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "titles_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "contents" (
    "id" BIGSERIAL NOT NULL,
    "group_id" INTEGER NOT NULL,
    "batch_id" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "status" "pool_row_status" NOT NULL DEFAULT 'available',
    "reserved_at" TIMESTAMPTZ(3),
    "consumed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_messages" (
    "id" BIGSERIAL NOT NULL,
    "message_id" VARCHAR(64) NOT NULL,
    "session_id" VARCHAR(128) NOT NULL,
    "seq" BIGINT NOT NULL,
    "role" "message_role" NOT NULL,
    "content" TEXT NOT NULL,
    "accepted_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "users_username_key" ON "users"("username");

-- CreateIndex
CREATE UNIQUE INDEX "feeds_user_id_url_key" ON "feeds"("user_id", "url");

-- CreateIndex
CREATE INDEX "articles_feed_id_published_at_idx" ON "articles"("feed_id", "published_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "articles_url_user_id_key" ON "articles"("url", "user_id");

-- CreateIndex
CREATE INDEX "ips_active_idx" ON "ips"("active");

-- CreateIndex
CREATE INDEX "item_snapshots_ip_id_status_idx" ON "item_snapshots"("ip_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "item_snapshots_ip_id_source_id_key" ON "item_snapshots"("ip_id", "source_id");

-- CreateIndex
CREATE UNIQUE INDEX "ip_stats_hourly_ip_id_hour_bucket_key" ON "ip_stats_hourly"("ip_id", "hour_bucket");

-- CreateIndex
CREATE UNIQUE INDEX "alerts_ip_id_rule_hour_bucket_key" ON "alerts"("ip_id", "rule", "hour_bucket");

-- CreateIndex
CREATE INDEX "processed_results_processed_at_idx" ON "processed_results"("processed_at");

-- CreateIndex
CREATE INDEX "titles_group_id_status_batch_id_id_idx" ON "titles"("group_id", "status", "batch_id" DESC, "id");

-- CreateIndex
CREATE INDEX "contents_group_id_status_batch_id_id_idx" ON "contents"("group_id", "status", "batch_id" DESC, "id");

-- CreateIndex
CREATE UNIQUE INDEX "chat_messages_message_id_key" ON "chat_messages"("message_id");

-- CreateIndex
CREATE INDEX "chat_messages_session_id_seq_idx" ON "chat_messages"("session_id", "seq");

-- AddForeignKey
ALTER TABLE "feeds" ADD CONSTRAINT "feeds_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "articles" ADD CONSTRAINT "articles_feed_id_fkey" FOREIGN KEY ("feed_id") REFERENCES "feeds"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "articles" ADD CONSTRAINT "articles_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "item_snapshots" ADD CONSTRAINT "item_snapshots_ip_id_fkey" FOREIGN KEY ("ip_id") REFERENCES "ips"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ip_stats_hourly" ADD CONSTRAINT "ip_stats_hourly_ip_id_fkey" FOREIGN KEY ("ip_id") REFERENCES "ips"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_ip_id_fkey" FOREIGN KEY ("ip_id") REFERENCES "ips"("id") ON DELETE CASCADE ON UPDATE CASCADE;
