-- AlterTable
ALTER TABLE "articles" ADD COLUMN     "enclosures" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "sanitizer_version" SMALLINT NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "articles_sanitizer_version_id_idx" ON "articles"("sanitizer_version", "id");
