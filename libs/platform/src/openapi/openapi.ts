import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

export const OPENAPI_PATH = '/openapi.json';

/** Builds the service's OpenAPI document from its controllers and serves it at `/openapi.json`. */
export function serveOpenApi(app: INestApplication, title: string, description: string): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(title)
      .setDescription(description)
      .setVersion('v1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Publishable-Key' }, 'publishable-key')
      .build(),
  );
  app.getHttpAdapter().get(OPENAPI_PATH, (_req: unknown, res: { json: (body: unknown) => void }) => res.json(document));
  return document;
}
