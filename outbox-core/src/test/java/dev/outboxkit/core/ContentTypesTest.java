package dev.outboxkit.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ContentTypesTest {

    @ParameterizedTest
    @ValueSource(strings = {"application/x-protobuf", "application/vnd.confluent.avro", "application/octet-stream",
            "application/vnd.apache.avro+binary", "application/x-protobuf; messageType=shop.OrderPlaced",
            "application/x-protobuf;messageType=\"shop.Order Placed\"", "text/plain; charset=utf-8; format=flowed",
            "application/cloudevents+json", "image/svg+xml", "APPLICATION/X-Protobuf"})
    void acceptsMediaTypes(String contentType) {
        assertThat(ContentTypes.problem(contentType)).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "protobuf|has no '/' between type and subtype",
            "/x-protobuf|the type is empty",
            "application/|the subtype is empty",
            "application/x protobuf|the subtype holds ' '",
            "-app/x|the type must start with a letter or digit",
            "application/x-protobuf; messageType|parameter 'messageType' is not name=value",
            "application/x-protobuf; =x|parameter '=x' is not name=value",
            "application/x-protobuf; a=b c|has a value that is neither a token nor quoted",
            "application/x-protobuf; a=|has no value",
            "application;x=a/b|has no '/' between type and subtype",
            "appl\u00e9/x|the type holds"})
    void refusesWhatIsNotOneWithTheReason(String contentType, String reason) {
        assertThat(ContentTypes.problem(contentType)).contains(reason);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  "})
    void aBlankContentTypeSaysWhatIsExpected(String contentType) {
        assertThat(ContentTypes.problem(contentType)).contains("needs a content type such as application/x-protobuf");
        assertThat(ContentTypes.problem(null)).contains("needs a content type");
    }

    @org.junit.jupiter.api.Test
    void aTypeNameLongerThanRfc6838AllowsIsRefused() {
        assertThat(ContentTypes.problem("application/" + "x".repeat(128))).contains("at most 127");
        assertThat(ContentTypes.problem("application/" + "x".repeat(127))).isNull();
    }
}
